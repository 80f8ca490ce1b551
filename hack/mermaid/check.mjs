// check.mjs reads a JSON array of Mermaid diagrams on stdin and parses each
// with mermaid.parse, in node with a jsdom window (mermaid sanitises labels
// with DOMPurify, which needs a DOM). It prints a JSON array of results:
// {"ok": true, "type": "flowchart-v2"} or {"ok": false, "error": "..."}.
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
globalThis.Element = dom.window.Element;
globalThis.HTMLElement = dom.window.HTMLElement;
globalThis.Node = dom.window.Node;

const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });

let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const text of JSON.parse(input)) {
  try {
    const r = await mermaid.parse(text);
    out.push({ ok: true, type: r.diagramType });
  } catch (e) {
    out.push({ ok: false, error: String(e && e.message ? e.message : e) });
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
