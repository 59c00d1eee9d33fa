// The HTML parity report: pure views and drawing of runs, trees and token diffs, plus the page writer.
// The CLI (`run --html`) and the Jest reporter both build their pages through this component.
export type { HtmlReportInput, ReportPairView } from "./types";
export { renderHtmlReport } from "./html-page";
export { pairView } from "./pair-view";
