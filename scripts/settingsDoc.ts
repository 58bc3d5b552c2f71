/**
 * docs/settings.md from src/config.ts SETTINGS: `npm run docs:settings` writes it, test/scripts/settingsDoc.test.ts
 * fails while it differs. Formatted by the repository's Prettier, so `npm run format` leaves it as written.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as prettier from "prettier";
import { SETTINGS, type SettingSpec } from "../src/config";
import { CLOUDS } from "../src/core/clouds";

export const SETTINGS_DOC = join(__dirname, "..", "docs", "settings.md");

const INTRO = `# Settings

<!-- Generated from src/config.ts SETTINGS by \`npm run docs:settings\`: edit the declarations there, not this file. -->

Every setting is read and validated once (\`src/config.ts\`); a missing or malformed one fails at start with its name.
Storage is the Functions connection \`AzureWebJobsStorage\`: a connection string (\`UseDevelopmentStorage=true\` for
Azurite) or identity-based (\`AzureWebJobsStorage__accountName\`, \`__credential\`, \`__clientId\`).
`;

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

function defaultOf(spec: SettingSpec): string {
  if (spec.default === undefined) return "**required**";
  if (spec.default === "") return spec.template === "secret" ? "(empty; a secret)" : "(empty)";
  return `\`${spec.default}\``;
}

/** What POOLSYNC_CLOUD picks, from src/core/clouds.ts. */
function cloudsSection(): string {
  const rows = Object.values(CLOUDS).map(
    (c) =>
      `| \`${c.name}\` | ${c.resourceManager} | \`${c.resourceManagerAudience}/.default\` | ${c.authorityHost} | \`${c.storageSuffix}\` |`,
  );
  return `## Clouds

\`POOLSYNC_CLOUD\` picks every cloud-specific endpoint at once, so they cannot disagree (\`src/core/clouds.ts\`). In
Azure the template sets it to the cloud it is deployed to (\`environment().name\`). \`ARM_ENDPOINT\` overrides only
where requests go (the simulator locally); tokens are still asked for the cloud's audience.

| \`POOLSYNC_CLOUD\` | Resource Manager | token scope | authority host | storage suffix |
| --- | --- | --- | --- | --- |
${rows.join("\n")}
`;
}

export async function renderSettingsDoc(): Promise<string> {
  const rows = Object.entries(SETTINGS as Record<string, SettingSpec>).map(
    ([name, spec]) => `| \`${name}\` | ${defaultOf(spec)} | ${cell(spec.doc)} |`,
  );
  const text = `${INTRO}\n| setting | default | meaning |\n| --- | --- | --- |\n${rows.join("\n")}\n\n${cloudsSection()}`;
  const options = (await prettier.resolveConfig(SETTINGS_DOC)) ?? {};
  return prettier.format(text, { ...options, filepath: SETTINGS_DOC });
}

export function currentSettingsDoc(): string {
  return readFileSync(SETTINGS_DOC, "utf8");
}

if (require.main === module) {
  void renderSettingsDoc().then((text) => {
    writeFileSync(SETTINGS_DOC, text);
    console.log(`wrote ${SETTINGS_DOC}`);
  });
}
