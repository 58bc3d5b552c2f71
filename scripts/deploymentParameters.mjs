// Reads a deployment's parameters (`az deployment group show --query properties.parameters -o json`, on stdin) and
// writes an ARM parameters file of them (stdout), so the workflow provisions with what azd chose and nothing is copied
// into repository variables. A secure parameter's value is never returned by ARM: it is left out, so the template's
// default applies (poolsyncCacheKey: a fresh key, which costs one ARM re-read per cached row).
import { readFileSync } from "node:fs";

const given = JSON.parse(readFileSync(0, "utf8"));
const parameters = {};
for (const [name, p] of Object.entries(given)) {
  if (/^secure/i.test(p.type ?? "") || p.value === undefined) continue;
  parameters[name] = { value: p.value };
}
process.stdout.write(
  JSON.stringify(
    {
      $schema: "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
      contentVersion: "1.0.0.0",
      parameters,
    },
    null,
    2,
  ) + "\n",
);
