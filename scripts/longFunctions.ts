import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/**
 * Lists the functions in src/ longer than LONG_FUNCTION_LINES lines, and whether a comment right above them says why
 * they must be long (a line starting "Long:" in the comment). `npx tsx scripts/longFunctions.ts` prints them,
 * longest first; test/longFunctions.test.ts fails on any without the reason.
 */

export const LONG_FUNCTION_LINES = 60;
/** The marker of the comment that says why a function is long. */
export const LONG_REASON = /(^|\n)\s*(\/\*\*?|\*|\/\/)\s*Long:/;

export interface LongFunction {
  file: string;
  name: string;
  line: number;
  lines: number;
  justified: boolean;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return "(anonymous)";
}

/** The comments above the function, or above the statement that holds it (`const f = () => …`). */
function leadingComments(node: ts.Node, source: ts.SourceFile): string {
  let holder: ts.Node = node;
  while (
    holder.parent &&
    (ts.isVariableDeclaration(holder.parent) ||
      ts.isVariableDeclarationList(holder.parent) ||
      ts.isVariableStatement(holder.parent) ||
      ts.isPropertyAssignment(holder.parent))
  )
    holder = holder.parent;
  const text = source.getFullText();
  return (ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [])
    .map((r) => text.slice(r.pos, r.end))
    .join("\n");
}

export function longFunctions(root: string, limit = LONG_FUNCTION_LINES): LongFunction[] {
  const found: LongFunction[] = [];
  for (const path of filesUnder(join(root, "src"))) {
    const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && "body" in node && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = end - start + 1;
        if (lines > limit)
          found.push({
            file: relative(root, path),
            name: nameOf(node, source),
            line: start + 1,
            lines,
            justified: LONG_REASON.test(leadingComments(node, source)),
          });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort((a, b) => b.lines - a.lines);
}

if (process.argv[1] && /longFunctions\.[tj]s$/.test(process.argv[1])) {
  for (const f of longFunctions(process.cwd()))
    console.log(
      `${String(f.lines).padStart(4)}  ${f.justified ? "justified" : "NO REASON"}  ${f.file}:${f.line} ${f.name}`,
    );
}
