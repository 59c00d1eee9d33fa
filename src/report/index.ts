// The HTML parity report: pure views and drawing of runs, trees and token diffs, plus the page writer.
// The CLI (`run --html`) and the Jest reporter both build their pages through this component.
export type { HtmlReportInput, ReportPairView, ReportRunView, ReportSampleView, ReportRecordView, ReportTreeNode, ReportFailureView } from "./types";
export { renderHtmlReport, failingLeaves } from "./html-page";
export { pairView, failureViews, type PairViewInput } from "./pair-view";
export { runView } from "./run-view";
export { alignSamples, alignTokens, firstDifferingToken, type AlignedSegment, type AlignedToken, type TokenCell, type AlignOptions } from "./token-alignment";
export { drawRetryTree, drawRecordChain, layoutTree, treeNodeMarks, type TreeNodeMarks } from "./tree-svg";
