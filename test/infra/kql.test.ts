/* eslint-disable @typescript-eslint/no-explicit-any -- these tests walk untyped template JSON */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./armSchema";
import { analyzeKql, NUMERIC, type KqlColumn } from "./kql";
import { readJson, resourcesOfType, type ArmTemplate } from "./templateChecks";

/**
 * Every KQL query of infra/main.json (the workbook's tiles, the log alerts) parsed and bound by the Kusto language
 * service against the Application Insights tables. Not run over rows: no Kusto engine runs offline
 * (infra/schemas-kql/README.md).
 */

const main = readJson<ArmTemplate>("main.json");

function tiles(t: ArmTemplate): { name: string; query: string; visualization: string }[] {
  const items = (t.variables?.workbook as { items: { type: number; name: string; content: any }[] }).items;
  return items
    .filter((i) => i.type === 3)
    .map((i) => ({ name: i.name, query: i.content.query as string, visualization: i.content.visualization as string }));
}

function alertQueries(t: ArmTemplate): { name: string; query: string; measure: string; dimensions: string[] }[] {
  return resourcesOfType(t, "Microsoft.Insights/scheduledQueryRules").flatMap((r) =>
    (r.properties as any).criteria.allOf.map((c: any) => ({
      name: r.name,
      query: c.query as string,
      measure: c.metricMeasureColumn as string,
      dimensions: ((c.dimensions ?? []) as { name: string }[]).map((d) => d.name),
    })),
  );
}

/**
 * What a timechart can draw: one datetime axis, at most one text column naming the series, and numeric values; a
 * union whose value columns differ in type splits them (`failures_long`, `failures_real`), which draws nothing useful.
 */
export function timechartShapeProblems(columns: KqlColumn[]): string[] {
  const problems: string[] = [];
  const times = columns.filter((c) => c.type === "datetime");
  const texts = columns.filter((c) => c.type === "string");
  const values = columns.filter((c) => NUMERIC.has(c.type));
  if (times.length !== 1) problems.push(`needs exactly one datetime column, has ${times.length}`);
  if (texts.length > 1) problems.push(`at most one series column, has ${texts.map((c) => c.name).join(", ")}`);
  if (values.length === 0) problems.push("has no numeric column to draw");
  const split = values.filter((c) => /_(int|long|real|decimal)$/.test(c.name));
  if (split.length > 0) problems.push(`a union split a value column by type: ${split.map((c) => c.name).join(", ")}`);
  const other = columns.filter((c) => c.type !== "datetime" && c.type !== "string" && !NUMERIC.has(c.type));
  if (other.length > 0)
    problems.push(`columns a chart cannot use: ${other.map((c) => `${c.name}: ${c.type}`).join(", ")}`);
  return problems;
}

function tileProblems(t: ArmTemplate): string[] {
  return tiles(t).flatMap((tile) => {
    const { errors, columns } = analyzeKql(tile.query);
    const shape = tile.visualization === "timechart" && errors.length === 0 ? timechartShapeProblems(columns) : [];
    return [...errors, ...shape].map((p) => `workbook tile ${tile.name}: ${p}`);
  });
}

function alertProblems(t: ArmTemplate): string[] {
  return alertQueries(t).flatMap((a) => {
    const { errors, columns } = analyzeKql(a.query);
    const problems = [...errors];
    if (errors.length === 0) {
      const measure = columns.find((c) => c.name === a.measure);
      if (!measure) problems.push(`metricMeasureColumn ${a.measure} is not a column of the result`);
      else if (!NUMERIC.has(measure.type)) problems.push(`metricMeasureColumn ${a.measure} is ${measure.type}`);
      for (const d of a.dimensions)
        if (!columns.some((c) => c.name === d)) problems.push(`dimension ${d} is not a column of the result`);
    }
    return problems.map((p) => `log alert ${a.name}: ${p}`);
  });
}

describe("the workbook's tiles and the log alerts' queries (Kusto language service, Application Insights tables)", () => {
  it("has queries to check", () => {
    expect(tiles(main).length).toBeGreaterThanOrEqual(6);
    expect(alertQueries(main).length).toBeGreaterThanOrEqual(6);
  });

  it("every workbook tile parses, binds and has the shape of a timechart", () => {
    expect(tileProblems(main)).toEqual([]);
  });

  it("every log alert parses, binds and yields its measure column as a number", () => {
    expect(alertProblems(main)).toEqual([]);
  });
});

describe("the KQL docs/operations.md gives operators", () => {
  const doc = readFileSync(join(REPO_ROOT, "docs", "operations.md"), "utf8");
  const blocks = [...doc.matchAll(/```kusto\n([\s\S]*?)```/g)].map((m) => (m[1] as string).trim());

  it("every query parses and binds against the Application Insights tables", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks.flatMap((q) => analyzeKql(q).errors.map((e) => `${q.split("\n")[0]}: ${e}`))).toEqual([]);
  });
});

describe("the KQL check can fail", () => {
  const withTile = (name: string, query: string): ArmTemplate => {
    const t = structuredClone(main);
    const items = (t.variables?.workbook as { items: { name: string; content: any }[] }).items;
    (items.find((i) => i.name === name) as { content: any }).content.query = query;
    return t;
  };

  it("refuses a keyword as a column name, as the 412 tile had it (`by kind = ...`)", () => {
    const q =
      'customMetrics\n| where name == "poolsync.arm.precondition_failed"\n| summarize n = sum(value) by kind = tostring(customDimensions.kind), bin(timestamp, 5m)';
    expect(tileProblems(withTile("precondition-failed", q)).join("\n")).toMatch(
      /tile precondition-failed: KS\d+ The name 'kind' needs to be bracketed as \['kind'\]/,
    );
  });

  it("refuses a union whose value column splits by type, as the failures tile had it (count() is long, sum() real)", () => {
    const old =
      'union\n  (requests | where success == false | summarize failures = count() by series = strcat("invocation ", operation_Name), bin(timestamp, 5m)),\n  (customMetrics | where name == "poolsync.declarations" and tostring(customDimensions.outcome) == "failed" | summarize failures = sum(value) by series = "declaration failed", bin(timestamp, 5m))\n| render timechart';
    expect(tileProblems(withTile("failures", old))).toEqual([
      "workbook tile failures: a union split a value column by type: failures_long, failures_real",
    ]);
  });

  it("refuses an unknown column and an alert whose measure column the query does not yield", () => {
    expect(analyzeKql("customMetrics | where nosuch == 1").errors.join("\n")).toMatch(/'nosuch' does not refer/);
    const t = structuredClone(main);
    const rule = resourcesOfType(t, "Microsoft.Insights/scheduledQueryRules")[0] as any;
    rule.properties.criteria.allOf[0].metricMeasureColumn = "notThere";
    expect(alertProblems(t).join("\n")).toMatch(/metricMeasureColumn notThere is not a column of the result/);
  });
});
