import { describe, expect, it } from "vitest";
import { loadRestApiTypes, restApiProblems } from "./restApiTypes";
import { readJson, type ArmResource, type ArmTemplate } from "./templateChecks";

/** Every resource of the templates against the REST API specification of the api-version it names. */

const types = loadRestApiTypes();

describe("infra templates against the REST API specification (infra/rest-api-types)", () => {
  it.each(["main.json", "access.json"])(
    "every resource type@api-version of %s exists and sets only properties it has",
    (file) => {
      const template = readJson<ArmTemplate>(file);
      expect(template.resources.flatMap((r) => restApiProblems(types, r))).toEqual([]);
    },
  );
});

describe("the REST API check can fail", () => {
  const main = () => structuredClone(readJson<ArmTemplate>("main.json"));
  const site = (t: ArmTemplate) => t.resources.find((r) => r.type === "Microsoft.Web/sites") as ArmResource;

  it("refuses functionAppConfig.siteUpdateStrategy on Microsoft.Web/sites@2024-04-01 (no published api-version has it)", () => {
    const t = main();
    const config = site(t).properties?.functionAppConfig as Record<string, unknown>;
    config.siteUpdateStrategy = { type: "RollingUpdate" };
    expect(restApiProblems(types, site(t)).join("\n")).toMatch(
      /functionAppConfig\.siteUpdateStrategy: FunctionAppConfig has no property "siteUpdateStrategy" at this api-version/,
    );
  });

  it("refuses a type or api-version the specification does not have", () => {
    const t = main();
    expect(restApiProblems(types, { ...site(t), apiVersion: "2099-01-01" })).toEqual([
      expect.stringMatching(/Microsoft\.Web\/sites@2099-01-01 .*: no such resource type and api-version/),
    ]);
  });

  it("refuses a read-only property, a wrong literal and a wrong type", () => {
    const t = main();
    const s = site(t);
    (s.properties as Record<string, unknown>).defaultHostName = "x.azurewebsites.net";
    (s.properties as Record<string, unknown>).httpsOnly = "yes";
    const problems = restApiProblems(types, s).join("\n");
    expect(problems).toMatch(/properties\.defaultHostName: read-only/);
    expect(problems).toMatch(/properties\.httpsOnly: expected true or false/);
  });

  it("refuses a value outside a closed enumeration, and accepts any text where the specification's enumeration is open", () => {
    const t = main();
    const auth = (site(t).resources as ArmResource[]).find((r) => r.name === "authsettingsV2") as ArmResource;
    (auth.properties as Record<string, Record<string, unknown>>).globalValidation!.unauthenticatedClientAction =
      "Return402";
    expect(restApiProblems(types, site(t)).join("\n")).toMatch(
      /unauthenticatedClientAction: "Return402" is not one of "RedirectToLoginPage", "AllowAnonymous", "Return401", "Return403"/,
    );
    // minimumTlsVersion is an open enumeration (x-ms-enum modelAsString): a newer value is the service's to judge.
    const storage = t.resources.find((r) => r.type === "Microsoft.Storage/storageAccounts") as ArmResource;
    (storage.properties as Record<string, unknown>).minimumTlsVersion = "TLS1_3";
    expect(restApiProblems(types, storage)).toEqual([]);
  });

  it("checks a nested child resource by its discriminated name (sites/config authsettingsV2)", () => {
    const t = main();
    const auth = (site(t).resources as ArmResource[]).find((r) => r.name === "authsettingsV2") as ArmResource;
    (auth.properties as Record<string, Record<string, unknown>>).globalValidation!.requireAuth = true;
    expect(restApiProblems(types, site(t)).join("\n")).toMatch(
      /globalValidation\.requireAuth: GlobalValidation has no property/,
    );
  });
});
