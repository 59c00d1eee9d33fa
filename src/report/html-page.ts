// Renders the whole parity report as one self-contained HTML page: summary, then per pair the trees, the failing
// parts as the matchers print them, and the aligned token view. Pure (data -> markup); no external asset or network.
import { escapeHtml } from "./html-escape";
import { alignSamples, firstDifferingToken, alignTokens, type AlignedToken, type TokenCell } from "./token-alignment";
import { drawRecordChain, drawRetryTree } from "./tree-svg";
import type { HtmlReportInput, ReportPairView, ReportRunView } from "./types";

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#fafbfc}
header{padding:16px 24px;background:#1d2330;color:#fff}header h1{margin:0 0 4px;font-size:20px}
main{padding:16px 24px;margin-right:320px}
table.summary{border-collapse:collapse;margin:12px 0}table.summary td{padding:2px 12px 2px 0}
table.index{border-collapse:collapse;margin:8px 0 16px}table.index td,table.index th{padding:2px 10px;border-bottom:1px solid #dde}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;font-weight:600;font-size:12px}
.pass .badge,.badge.pass{background:#d6f5dd;color:#11602a}.fail .badge,.badge.fail{background:#fbd9d9;color:#8a1111}
section.pair{border:1px solid #d8dce5;border-radius:8px;background:#fff;margin:0 0 18px;padding:8px 16px}
section.pair.fail{border-color:#e39a9a}
section.pair h2{font-size:16px;margin:6px 0;display:inline}section.pair summary{cursor:pointer;padding:4px 0}.origin{color:#667;font-size:12px}
.trees{display:flex;gap:24px;flex-wrap:wrap;overflow-x:auto}.trees h3{font-size:13px;margin:4px 0}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}svg .edge{fill:none;stroke:#8a93a6;stroke-width:1.5}
svg .node rect{fill:#eef1f6;stroke:#8a93a6}svg .root rect{stroke:#2b59c3;stroke-width:2}
svg .superseded rect{fill:#f3f3f3;stroke:#999;stroke-dasharray:4 3}svg .kept rect{fill:#d6f5dd;stroke:#11602a;stroke-width:2}
svg .failing rect{fill:#fbd9d9;stroke:#c00;stroke-width:3;stroke-dasharray:none}
pre.failures{background:#fff6f6;border-left:3px solid #c00;padding:8px;white-space:pre-wrap;font-size:12px}
.legend span{margin-right:12px;font-size:12px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle;border:1px solid #999}
.tokens{font:12px/1.9 ui-monospace,monospace;word-break:break-all}
.tok{padding:1px 0;border-radius:2px;cursor:pointer;white-space:pre-wrap}
.tok.prompt{color:#556}.tok.loss{background:#dbe8ff}.tok.noloss{background:#f1f1f1}
.tok.diff{outline:2px solid #c00;background:#ffd2d2}.tok.only-v1{outline:2px dashed #b60;background:#ffe6bf}.tok.only-v2{outline:2px dashed #393;background:#d9f5d9}.tok.first-diff{outline:3px solid #c00;box-shadow:0 0 0 3px #ffb0b0}
.tok.sel{outline:2px solid #2b59c3}
.folded{display:inline-block;margin:0 4px;padding:0 6px;background:#eee;color:#667;border-radius:8px;font-size:11px}
aside{position:fixed;right:0;top:0;bottom:0;width:300px;overflow:auto;background:#fff;border-left:1px solid #d8dce5;padding:16px;font-size:12px}
aside h2{font-size:14px;margin:0 0 8px}aside dl{display:grid;grid-template-columns:auto 1fr;gap:2px 8px}aside dd{margin:0;font-family:ui-monospace,monospace;word-break:break-all}
.note{color:#778;font-style:italic}
`;

const SCRIPT = `
(function(){
  var panel=document.getElementById('token-panel');var selected=null;
  function show(el){
    if(selected)selected.classList.remove('sel');selected=el;el.classList.add('sel');
    var d=el.dataset;var rows=[['pair',d.pair],['position',d.i],['v1 id',d.l],['v2 id',d.r],['v1 text',d.lt],['v2 text',d.rt],['v1 loss mask',d.lm],['v2 loss mask',d.rm],['v1 log-prob bits',d.lb],['v2 log-prob bits',d.rb],['differs',d.diff]];
    var html='<h2>Token</h2><dl>';
    rows.forEach(function(r){if(r[1]!==undefined&&r[1]!=='')html+='<dt>'+r[0]+'</dt><dd>'+r[1].replace(/&/g,'&amp;').replace(/</g,'&lt;')+'</dd>';});
    panel.innerHTML=html+'</dl>';
  }
  document.addEventListener('mouseover',function(e){var t=e.target;if(t&&t.classList&&t.classList.contains('tok'))show(t);});
  document.addEventListener('click',function(e){var t=e.target;if(t&&t.classList&&t.classList.contains('tok'))show(t);});
})();
`;

function visibleText(text: string | null, id: number): string {
  if (text === null) return `[${id}]`;
  return text.replace(/\n/g, "\u21b5\n");
}

function cellAttributes(prefix: "l" | "r", cell: TokenCell | null): string {
  if (cell === null) return ` data-${prefix}="(none)"`;
  const parts = [` data-${prefix}="${cell.id}"`];
  if (cell.text !== null) parts.push(` data-${prefix}t="${escapeHtml(JSON.stringify(cell.text))}"`);
  if (cell.mask !== null) parts.push(` data-${prefix}m="${cell.mask}"`);
  if (cell.logProbBits !== null) parts.push(` data-${prefix}b="0x${cell.logProbBits}"`);
  return parts.join("");
}

function tokenMarkup(pairIndex: number, token: AlignedToken, firstDiff: number): string {
  const shown = token.left ?? token.right;
  if (shown === null) return "";
  const classes = ["tok", shown.mask === null ? "prompt" : shown.mask === 1 ? "loss" : "noloss"];
  if (token.differs) classes.push("diff");
  if (token.right === null) classes.push("only-v1");
  if (token.left === null) classes.push("only-v2");
  if (token.index === firstDiff) classes.push("first-diff");
  const id = token.index === firstDiff ? ` id="pair-${pairIndex}-first-diff"` : "";
  let text = escapeHtml(visibleText(shown.text, shown.id));
  if (token.differs && token.right !== null && token.left !== null && token.left.id !== token.right.id) {
    text = `${text}<sub>→${escapeHtml(visibleText(token.right.text, token.right.id))}</sub>`;
  }
  return `<span class="${classes.join(" ")}"${id} data-pair="${pairIndex}" data-i="${token.index}" data-diff="${token.differs}"${cellAttributes("l", token.left)}${cellAttributes("r", token.right)}>${text}</span>`;
}

function tokenView(pairIndex: number, pair: ReportPairView): string {
  const left = pair.v1?.sample ?? null;
  const right = pair.v2?.sample ?? null;
  if (left === null && right === null) return `<p class="note">no training sample to show</p>`;
  const firstDiff = firstDifferingToken(alignTokens(left, right));
  const segments = alignSamples(left, right);
  const body = segments
    .map((segment) =>
      segment.kind === "folded"
        ? `<span class="folded" title="tokens ${segment.from}–${segment.to - 1} are equal in v1 and v2">… ${segment.to - segment.from} equal tokens …</span>`
        : segment.tokens.map((token) => tokenMarkup(pairIndex, token, firstDiff)).join(""),
    )
    .join("");
  const sizes = `v1 ${left?.tokens.length ?? 0} tokens (response ${left?.responseLength ?? 0}), v2 ${right?.tokens.length ?? 0} tokens (response ${right?.responseLength ?? 0})`;
  const headline = firstDiff < 0 ? `${sizes}; every token, mask entry and log-prob bit agrees` : `${sizes}; first difference at token ${firstDiff}`;
  return `<p class="legend"><span><i class="sw" style="background:#dbe8ff"></i>trained (loss mask 1)</span><span><i class="sw" style="background:#f1f1f1"></i>response, not trained</span><span><i class="sw" style="background:#fff"></i>prompt</span><span><i class="sw" style="background:#ffd2d2;border-color:#c00"></i>differs</span><span><i class="sw" style="background:#ffe6bf;border-color:#b60"></i>only in v1</span><span><i class="sw" style="background:#d9f5d9;border-color:#393"></i>only in v2</span></p><p>${escapeHtml(headline)}</p><div class="tokens">${body}</div>`;
}

/**
 * Kept v2 leaves the failure concerns: those off the v2 active path (a picker keeping superseded retries), else,
 * when the compared sample itself differs, the kept leaf it came from.
 */
export function failingLeaves(pair: ReportPairView): number[] {
  const v2 = pair.v2;
  if (pair.pass || v2 === null || v2.tree === null) return [];
  const active = new Set(v2.records.map((record) => record.responseId));
  const byId = new Map(v2.tree.nodes.map((node) => [node.id, node]));
  const offPath = v2.keptLeaves.filter((leaf) => !active.has(byId.get(leaf)?.responseId ?? null));
  if (offPath.length > 0) return offPath;
  const sampleDiffers = pair.failures.some((failure) => /(^|: )(training )?sample/.test(failure.part));
  return sampleDiffers ? v2.keptLeaves.slice(0, 1) : [];
}

function runColumn(title: string, run: ReportRunView | null, drawing: (run: ReportRunView) => string): string {
  if (run === null) return `<div><h3>${escapeHtml(title)}</h3><p class="note">not run</p></div>`;
  const failure = run.failure === null ? "" : `<p class="note">${escapeHtml(run.failure)}</p>`;
  return `<div><h3>${escapeHtml(title)} · ${run.records.length} records · ${run.sampleCount} samples</h3>${drawing(run)}${failure}</div>`;
}

function pairSection(pair: ReportPairView, index: number): string {
  const failing = failingLeaves(pair);
  const tree = (run: ReportRunView): string => drawRetryTree(run, failing);
  const failures = pair.failures.length === 0 ? "" : `<pre class="failures">${escapeHtml(pair.failures.map((failure) => failure.text).join("\n"))}</pre>`;
  const status = pair.pass ? "pass" : "fail";
  return [
    `<section class="pair ${status}" id="pair-${index}" data-pass="${pair.pass}"><details${pair.pass ? "" : " open"}>`,
    `<summary><h2><span class="badge">${pair.pass ? "PASS" : "FAIL"}</span> ${escapeHtml(pair.title)}</h2></summary>`,
    pair.origin === null ? "" : `<div class="origin">${escapeHtml(pair.origin)}</div>`,
    `<p class="legend"><span><i class="sw" style="border:2px solid #2b59c3"></i>root</span><span><i class="sw" style="background:#d6f5dd;border-color:#11602a"></i>kept leaf</span><span><i class="sw" style="border-style:dashed"></i>superseded retry</span><span><i class="sw" style="background:#fbd9d9;border-color:#c00"></i>failing leaf</span></p>`,
    `<div class="trees">${runColumn("v1 record chain", pair.v1, (run) => drawRecordChain(run.records))}${runColumn("v2 retry tree", pair.v2, tree)}</div>`,
    failures,
    `<h3>Training sample, v1 aligned with v2</h3>`,
    tokenView(index, pair),
    `</details></section>`,
  ].join("\n");
}

/** The complete report page. */
export function renderHtmlReport(input: HtmlReportInput): string {
  const failed = input.pairs.filter((pair) => !pair.pass).length;
  const summary = input.summary.map(([label, value]) => `<tr><td>${escapeHtml(label)}</td><td>${escapeHtml(value)}</td></tr>`).join("");
  const index = input.pairs
    .map(
      (pair, i) =>
        `<tr class="${pair.pass ? "pass" : "fail"}"><td><a href="#pair-${i}">${escapeHtml(pair.title)}</a></td><td><span class="badge ${pair.pass ? "pass" : "fail"}">${pair.pass ? "PASS" : "FAIL"}</span></td><td>${escapeHtml(pair.failures.map((failure) => failure.part).join(", "))}</td></tr>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(input.title)}</title><style>${STYLE}</style></head>
<body>
<header><h1>${escapeHtml(input.title)}</h1><div>${input.pairs.length - failed}/${input.pairs.length} passed · generated ${escapeHtml(input.generatedAt)}</div></header>
<main>
<table class="summary">${summary}</table>
<table class="index"><tr><th>pair</th><th>verdict</th><th>failing parts</th></tr>${index}</table>
${input.pairs.map(pairSection).join("\n")}
</main>
<aside id="token-panel"><h2>Token</h2><p class="note">Hover or click a token to see its ids, loss mask and log-prob bits in v1 and v2.</p></aside>
<script>${SCRIPT}</script>
</body></html>
`;
}
