import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./armSchema";

/**
 * KQL parsed and bound by Microsoft's own Kusto language service (@kusto/language-service-next, the parser behind
 * the Azure portal's and Data Explorer's editors) against the columns of the Application Insights tables
 * (infra/schemas-kql): a misspelt column, a keyword used as a name (`by kind=`), a type mismatch or a union whose
 * columns split by type is an error here, as it would be on the first open of the workbook or the first run of an
 * alert.
 */

/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any -- Bridge.NET's global API */
require("@kusto/language-service-next/bridge.js");
require("@kusto/language-service-next/Kusto.Language.Bridge.js");
const Kusto = (globalThis as any).Kusto.Language;

export const KQL_SCHEMA_FILE = join(REPO_ROOT, "infra", "schemas-kql", "applicationInsights.json");

export interface KqlColumn {
  name: string;
  type: string;
}

export interface KqlAnalysis {
  errors: string[];
  columns: KqlColumn[];
}

let globals: unknown;

function applicationInsightsGlobals(): unknown {
  if (globals) return globals;
  const schema = JSON.parse(readFileSync(KQL_SCHEMA_FILE, "utf8")) as { tables: Record<string, [string, string][]> };
  const tables = Object.entries(schema.tables).map(([name, columns]) =>
    Kusto.Symbols.TableSymbol.From(`(${columns.map(([c, t]) => `['${c}']: ${t}`).join(", ")})`).WithName(name),
  );
  const database = new Kusto.Symbols.DatabaseSymbol.ctor("applicationInsights", tables);
  globals = Kusto.GlobalState.Default.WithDatabase(database);
  return globals;
}

function list<T>(l: any): T[] {
  const out: T[] = [];
  for (let i = 0; i < (l?.Count ?? 0); i++) out.push(l.getItem(i) as T);
  return out;
}

/** Errors (warnings left out) with the text they point at, and the columns of the query's result. */
export function analyzeKql(query: string): KqlAnalysis {
  const code = Kusto.KustoCode.ParseAndAnalyze(query, applicationInsightsGlobals());
  const errors = list<any>(code.GetDiagnostics())
    .filter((d) => String(d.Severity) === "Error")
    .map((d) => `${d.Code} ${d.Message} (at "${query.slice(d.Start, d.Start + Math.max(d.Length, 1))}")`);
  const columns = list<any>(code.ResultType?.Columns).map((c) => ({ name: String(c.Name), type: String(c.Type.Name) }));
  return { errors, columns };
}

export const NUMERIC = new Set(["int", "long", "real", "decimal"]);
