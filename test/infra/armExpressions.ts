import { createHash } from "node:crypto";
import type { ArmResource, ArmTemplate } from "./templateChecks";

/**
 * A small evaluator of ARM template expressions, enough to see what a template deploys for given parameters: which
 * resources' conditions hold, and the values of the properties that decide whether the app reaches its storage.
 * Functions of the deployment's runtime state (resourceId, subscription(), reference...) give stand-in values that
 * are stable and comparable (an ID is `/id/<type>/<names>`), never Azure's: this answers "which path does the
 * template build", not "does Azure accept it". A function it does not know is an error, never a guess.
 */

type Value = unknown;

export interface Deployment {
  parameters: Record<string, Value>;
  variables: Record<string, Value>;
  copyIndex?: Record<string, number>;
  lambda?: Record<string, Value>;
}

/** A lambda(): its parameter names and its body, evaluated per call. */
interface Lambda {
  names: string[];
  body: Token[];
}

type Token = { kind: "id" | "str" | "num" | "punct"; text: string };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (/\s/.test(c)) i++;
    else if (c === "'") {
      let s = "";
      i++;
      for (;;) {
        if (i >= src.length) throw new Error(`unterminated string in ${src}`);
        if (src[i] === "'" && src[i + 1] === "'") {
          s += "'";
          i += 2;
        } else if (src[i] === "'") break;
        else s += src[i++];
      }
      i++;
      out.push({ kind: "str", text: s });
    } else if (/[0-9-]/.test(c)) {
      const m = /^-?\d+/.exec(src.slice(i)) as RegExpExecArray;
      out.push({ kind: "num", text: m[0] });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i)) as RegExpExecArray;
      out.push({ kind: "id", text: m[0] });
      i += m[0].length;
    } else if ("(),.[]".includes(c)) {
      out.push({ kind: "punct", text: c });
      i++;
    } else throw new Error(`unexpected ${c} in ${src}`);
  }
  return out;
}

const STORAGE_SUFFIX = "core.windows.net";

const bool = (v: Value) => {
  if (typeof v !== "boolean") throw new Error(`expected a bool, got ${JSON.stringify(v)}`);
  return v;
};

const isEmpty = (v: Value) =>
  v === null ||
  v === undefined ||
  v === "" ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === "object" && Object.keys(v).length === 0);

const id = (...parts: Value[]) => `/id/${parts.map(String).join("/")}`;

class Evaluator {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly template: ArmTemplate,
    private readonly d: Deployment,
  ) {}

  parseAll(): Value {
    const v = this.expr();
    if (this.pos !== this.tokens.length) throw new Error(`trailing tokens after ${this.pos}`);
    return v;
  }

  private peek = () => this.tokens[this.pos];
  private take(text?: string): Token {
    const t = this.tokens[this.pos++];
    if (!t || (text && t.text !== text)) throw new Error(`expected ${text ?? "a token"}, got ${t?.text ?? "end"}`);
    return t;
  }

  private expr(): Value {
    const t = this.take();
    let v: Value;
    if (t.kind === "str") v = t.text;
    else if (t.kind === "num") v = Number(t.text);
    else if (t.kind === "id") {
      // Lazy arguments: if() evaluates one branch only, as ARM does.
      this.take("(");
      if (t.text.toLowerCase() === "if") v = this.ifCall();
      else if (t.text.toLowerCase() === "lambda") v = this.lambdaCall();
      else {
        const args: Value[] = [];
        while (this.peek()?.text !== ")") {
          args.push(this.expr());
          if (this.peek()?.text === ",") this.take(",");
        }
        this.take(")");
        v = this.call(t.text, args);
      }
    } else throw new Error(`unexpected ${t.text}`);
    for (;;) {
      if (this.peek()?.text === ".") {
        this.take(".");
        v = (v as Record<string, Value> | undefined)?.[this.take().text];
      } else if (this.peek()?.text === "[") {
        this.take("[");
        const key = this.expr();
        this.take("]");
        v = (v as Record<string, Value>)[key as string];
      } else return v;
    }
  }

  private skip(): void {
    // Skips one argument without evaluating it (the branch if() does not take).
    let depth = 0;
    while (this.pos < this.tokens.length) {
      const t = this.peek() as Token;
      if (depth === 0 && (t.text === "," || t.text === ")")) return;
      if (t.text === "(" || t.text === "[") depth++;
      if (t.text === ")" || t.text === "]") depth--;
      this.pos++;
    }
  }

  private ifCall(): Value {
    const cond = bool(this.expr());
    this.take(",");
    let v: Value;
    if (cond) {
      v = this.expr();
      this.take(",");
      this.skip();
    } else {
      this.skip();
      this.take(",");
      v = this.expr();
    }
    this.take(")");
    return v;
  }

  private lambdaCall(): Lambda {
    const names: string[] = [];
    while (this.peek()?.kind === "str") {
      names.push(this.take().text);
      this.take(",");
    }
    const start = this.pos;
    this.skip();
    const body = this.tokens.slice(start, this.pos);
    this.take(")");
    return { names, body };
  }

  private apply(f: Lambda, args: Value[]): Value {
    const lambda = { ...this.d.lambda, ...Object.fromEntries(f.names.map((n, i) => [n, args[i]])) };
    return new Evaluator(f.body, this.template, { ...this.d, lambda }).parseAll();
  }

  private call(name: string, a: Value[]): Value {
    switch (name.toLowerCase()) {
      case "lambdavariables": {
        const n = a[0] as string;
        if (!this.d.lambda || !(n in this.d.lambda)) throw new Error(`lambdaVariables('${n}') outside its lambda`);
        return this.d.lambda[n];
      }
      case "map":
        return (a[0] as Value[]).map((x) => this.apply(a[1] as Lambda, [x]));
      case "filter":
        return (a[0] as Value[]).filter((x) => bool(this.apply(a[1] as Lambda, [x])));
      case "parameters": {
        const p = a[0] as string;
        if (p in this.d.parameters) return this.d.parameters[p];
        const def = this.template.parameters?.[p];
        if (!def) throw new Error(`no parameter ${p}`);
        if (def.defaultValue === undefined) throw new Error(`parameter ${p} has no default and was not given`);
        return evaluate(def.defaultValue, this.template, this.d);
      }
      case "variables": {
        const v = a[0] as string;
        if (!(v in this.d.variables)) {
          if (!this.template.variables || !(v in this.template.variables)) throw new Error(`no variable ${v}`);
          this.d.variables[v] = evaluate(this.template.variables[v], this.template, this.d);
        }
        return this.d.variables[v];
      }
      case "copyindex": {
        const loop = typeof a[0] === "string" ? a[0] : "";
        const offset = typeof a[0] === "number" ? a[0] : typeof a[1] === "number" ? a[1] : 0;
        const i = this.d.copyIndex?.[loop];
        if (i === undefined) throw new Error(`copyIndex(${loop}) outside its loop`);
        return i + offset;
      }
      case "and":
        return a.every(bool);
      case "or":
        return a.some(bool);
      case "not":
        return !bool(a[0]);
      case "true":
        return true;
      case "false":
        return false;
      case "null":
        return null;
      case "empty":
        return isEmpty(a[0]);
      case "equals":
        return JSON.stringify(a[0]) === JSON.stringify(a[1]);
      case "length":
        return Array.isArray(a[0]) || typeof a[0] === "string" ? a[0].length : Object.keys(a[0] as object).length;
      case "createarray":
        return a;
      case "createobject": {
        const o: Record<string, Value> = {};
        for (let i = 0; i < a.length; i += 2) o[a[i] as string] = a[i + 1];
        return o;
      }
      case "concat":
        return Array.isArray(a[0]) ? a.flat() : a.map(String).join("");
      case "format":
        return String(a[0]).replace(/\{(\d+)\}/g, (_, n: string) => String(a[Number(n) + 1]));
      case "tolower":
        return String(a[0]).toLowerCase();
      case "replace":
        return String(a[0]).split(String(a[1])).join(String(a[2]));
      case "take":
        return (a[0] as string | Value[]).slice(0, a[1] as number);
      case "contains":
        return Array.isArray(a[0])
          ? a[0].includes(a[1])
          : typeof a[0] === "string"
            ? a[0].includes(String(a[1]))
            : (a[1] as string) in (a[0] as object);
      case "uniquestring":
        return createHash("sha256").update(a.map(String).join("|")).digest("hex").slice(0, 13);
      case "guid":
        return createHash("sha256").update(a.map(String).join("|")).digest("hex").slice(0, 32);
      case "newguid":
        return "00000000-0000-0000-0000-000000000000";
      case "string":
        return typeof a[0] === "string" ? a[0] : JSON.stringify(a[0]);
      case "environment":
        return { name: "AzureCloud", suffixes: { storage: STORAGE_SUFFIX } };
      case "subscription":
        return { id: "/subscriptions/sub", subscriptionId: "sub", tenantId: "tenant" };
      case "resourcegroup":
        return { id: "/subscriptions/sub/resourceGroups/rg", name: "rg", location: "westeurope" };
      case "resourceid":
      case "subscriptionresourceid":
        return id(...a);
      case "extensionresourceid":
        return `${String(a[0])}/providers${id(...a.slice(1)).slice(3)}`;
      case "reference":
        // The runtime state of a deployed resource: a stand-in that says which resource it reads.
        return {
          principalId: `principal-of:${String(a[0])}`,
          clientId: `client-of:${String(a[0])}`,
          ConnectionString: `connection-of:${String(a[0])}`,
          defaultHostName: `host-of:${String(a[0])}`,
          primaryEndpoints: {
            blob: `https://account.blob.${STORAGE_SUFFIX}/`,
            queue: `https://account.queue.${STORAGE_SUFFIX}/`,
            table: `https://account.table.${STORAGE_SUFFIX}/`,
          },
        };
      default:
        throw new Error(`the test evaluator does not know the ARM function ${name}()`);
    }
  }
}

/** A template value with every expression string evaluated (objects and arrays walked); `[[` is a literal `[`. */
export function evaluate(value: Value, template: ArmTemplate, d: Deployment): Value {
  if (typeof value === "string") {
    if (value.startsWith("[[")) return value.slice(1);
    if (value.startsWith("[") && value.endsWith("]"))
      return new Evaluator(tokenize(value.slice(1, -1)), template, d).parseAll();
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => evaluate(v, template, d));
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [evaluate(k, template, d) as string, evaluate(v, template, d)]),
    );
  return value;
}

export interface Deployed {
  type: string;
  name: string;
  id: string;
  body: Record<string, Value>;
}

/**
 * What the template deploys for these parameters: each resource whose condition holds, copy loops expanded, with its
 * name, a stand-in ID and its evaluated body. Only the parts a test asks for are evaluated deeply (`properties`,
 * `location`, `kind`, `sku`); the rest of a resource needs no evaluator.
 */
export function deploy(template: ArmTemplate, parameters: Record<string, Value>): Deployed[] {
  const out: Deployed[] = [];
  const d: Deployment = { parameters, variables: {} };
  for (const r of template.resources) {
    const copy = r.copy as { name: string; count: unknown } | undefined;
    const count = copy ? (evaluate(copy.count, template, d) as number) : 1;
    for (let i = 0; i < count; i++) {
      const di: Deployment = copy ? { ...d, copyIndex: { "": i, [copy.name]: i } } : d;
      if (r.condition !== undefined && !bool(evaluate(r.condition, template, di))) continue;
      out.push(deployed(template, r, di));
    }
  }
  return out;
}

function deployed(template: ArmTemplate, r: ArmResource, d: Deployment): Deployed {
  const name = evaluate(r.name, template, d) as string;
  const body: Record<string, Value> = {};
  for (const key of ["properties", "location", "kind", "sku"])
    if (r[key] !== undefined) body[key] = evaluate(r[key], template, d);
  return { type: r.type, name, id: id(r.type, ...name.split("/")), body };
}
