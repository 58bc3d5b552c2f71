/**
 * The Azure clouds poolsync runs in, by the names Azure itself gives them (ARM's environment().name, `az cloud list`):
 * where Resource Manager answers, the audience its tokens are for, where Microsoft Entra ID signs them, and the suffix
 * of storage endpoints. One setting (POOLSYNC_CLOUD) picks all four, so they cannot disagree.
 */

export interface AzureCloud {
  name: CloudName;
  resourceManager: string;
  /** The token audience of Resource Manager: a token for it is asked with scope `<audience>/.default`. */
  resourceManagerAudience: string;
  authorityHost: string;
  storageSuffix: string;
}

export const CLOUD_NAMES = ["AzureCloud", "AzureUSGovernment", "AzureChinaCloud"] as const;
export type CloudName = (typeof CLOUD_NAMES)[number];

export const CLOUDS: Record<CloudName, AzureCloud> = {
  AzureCloud: {
    name: "AzureCloud",
    resourceManager: "https://management.azure.com",
    resourceManagerAudience: "https://management.azure.com",
    authorityHost: "https://login.microsoftonline.com",
    storageSuffix: "core.windows.net",
  },
  AzureUSGovernment: {
    name: "AzureUSGovernment",
    resourceManager: "https://management.usgovcloudapi.net",
    resourceManagerAudience: "https://management.usgovcloudapi.net",
    authorityHost: "https://login.microsoftonline.us",
    storageSuffix: "core.usgovcloudapi.net",
  },
  AzureChinaCloud: {
    name: "AzureChinaCloud",
    resourceManager: "https://management.chinacloudapi.cn",
    resourceManagerAudience: "https://management.chinacloudapi.cn",
    authorityHost: "https://login.chinacloudapi.cn",
    storageSuffix: "core.chinacloudapi.cn",
  },
};

/** The token scope for Resource Manager in a cloud (the simulator accepts any token, so it takes the cloud's too). */
export const armScope = (cloud: AzureCloud): string => `${cloud.resourceManagerAudience}/.default`;
