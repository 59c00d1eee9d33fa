// The work behind `session-parity run`: resolve or start the servers, run the batch through v1 and v2 at once,
// judge every pair with the matchers' checks, and return the report. Prints nothing; stops all it started.
import { resolveFixtureModelChoice } from "../fixture/model-choice";
import { TitoModelError } from "../tokenizer/families/types";
import { DEFAULT_TITO_MODEL, getTitoFamily } from "../tokenizer/families/registry";
import { redactUrlCredentials } from "../server/redaction";
import { Agent } from "undici";
import { buildDriverSchedule, QWEN3_APPEND_ROLES } from "../agent";
import { buildWeatherInputSamples } from "../fixture/input-samples";
import { MESSAGE_MATCHER_ENV, startParityEnvironment, type ParityEnvironment } from "../fixture/parity-environment";
import { startParityEnvironmentSplit } from "../fixture/environment-thread";
import { routingReplayFromEnv, type RoutingReplaySettings } from "../fixture/routing-replay";
import { runAgenticRetryTrajectories } from "../fixture/run-trajectories";
import { BACKEND_URL_ENV, HF_CHECKPOINT_ENV, sessionServerEnvName } from "../fixture/server-resolution";
import type { SessionParityRun } from "../fixture/types";
import type { SessionServerVersion } from "../server/types";
import { CliExit, EXIT_USAGE } from "./exit-codes";
import { judgePair, toReportCheck } from "./judge";
import { checkSessionVerifyGate } from "../matchers/session-verify-gate";
import { packageVersion } from "./package-version";
import { ProgressBar, type ProgressStream } from "./progress-bar";
import type { ParityReport, ReportRun, ReportServer } from "./report";
import { DEFAULT_WAIT_SECONDS, parseUrl, parseUrlList, type RunCommandOptions } from "./run-options";
import { SessionRequestCounter } from "./request-counter";
import { summarizeServerProblems } from "./server-problems";
import { checkConfiguration } from "./configuration-check";
import { thinkBlockHint } from "./think-block-hint";
import type { ModelChoice } from "../tokenizer/families/types";
import { detectSessionServerVersion } from "./version-check";
import { describeTransportError, probeHealth } from "../fixture/health-probe";
import { HealthReplyError, v1Fix, waitForHealth, type HealthTarget } from "../fixture/health-wait";

/** Where `runParity` reads variables and draws progress. */
export interface RunParityContext {
  /** Variables read for servers not given by flags (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Stream for the progress bar (drawn only when it is a TTY; default none). */
  progress?: ProgressStream;
  /** Deadline of each server reachability probe (default 5000 ms). */
  probeTimeoutMs?: number;
  /** Receives one line when the run starts waiting for a given server that does not answer yet (default: dropped). */
  notice?: (line: string) => void;
  /** Receives every pair of runs (v1, v2; an Error where a run could not start) before the servers stop. */
  onPairs?: (pairs: [SessionParityRun | Error, SessionParityRun | Error][]) => void;
  /**
   * When the measured "total" starts, on the `performance.now()` clock (default: when `runParity` is called). The
   * command passes 0, Node's process start, so the closing line reports the whole wall time a user waited.
   */
  startedAtMs?: number;
}

/** A server location with the flag or variable it came from (named in error messages). */
interface GivenLocation {
  url: string;
  from: string;
}

const VERSIONS: readonly SessionServerVersion[] = ["v1", "v2"];

/** Smallest `--batch` whose embedded session servers get a worker thread unless `--[no-]servers-thread` says. */
const SERVERS_THREAD_MIN_BATCH = 64;

/**
 * Runs `options.batch` weather trajectories through v1 and v2 concurrently and judges every pair.
 * Servers come from the flags, else from `SESSION_PARITY_BACKEND_URL` / `_V1_URL` / `_V2_URL`
 * (`SESSION_PARITY_HF_CHECKPOINT` for the tokenizer), else are started in-process and stopped before returning.
 *
 * @throws CliExit (status 2) naming the flag, variable or server when a location is malformed, unreachable
 *   or cannot be started. A failing trajectory is not an error: it is a failed verdict in the report.
 */
export async function runParity(options: RunCommandOptions, context: RunParityContext = {}): Promise<ParityReport> {
  const env = context.env ?? process.env;
  const startedAt = new Date();
  const t0 = performance.now();
  const backendGiven = locate(options.backend, "--backend", env, BACKEND_URL_ENV, parseUrl);
  const v1Given = locate(options.v1, "--v1", env, sessionServerEnvName("v1"), parseUrlList);
  const v2Given = locate(options.v2, "--v2", env, sessionServerEnvName("v2"), parseUrlList);
  const hfCheckpoint = options.hfCheckpoint ?? (env[HF_CHECKPOINT_ENV]?.trim() || undefined);
  const mode = options.toolCallFailureMode ?? "rollback";
  let model: ReturnType<typeof resolveFixtureModelChoice>;
  try {
    model = resolveFixtureModelChoice({ ...options, hfCheckpoint }, env);
  } catch (error) {
    throw new CliExit(EXIT_USAGE, (error as Error).message);
  }

  const health: Record<string, unknown> = {};
  const waitSeconds = options.wait ?? DEFAULT_WAIT_SECONDS;
  const probe = async (what: string, target: HealthTarget, given: GivenLocation | undefined): Promise<void> => {
    if (given === undefined) return;
    for (const url of given.url.split(",")) {
      const shown = redactUrlCredentials(url);
      try {
        const reply = await waitForHealth(url, {
          target,
          deadlineMs: waitSeconds * 1000,
          probeTimeoutMs: context.probeTimeoutMs,
          onWaiting: (reason) =>
            context.notice?.(
              `session-parity: waiting up to ${waitSeconds} s (--wait) for the ${what} at ${shown} (${given.from}) to answer GET /health (${reason})`,
            ),
        });
        health[url] = reply.body;
      } catch (error) {
        const verb = error instanceof HealthReplyError ? "cannot use" : "cannot reach";
        throw new CliExit(EXIT_USAGE, `${verb} the ${what} at ${shown} (${given.from}): ${(error as Error).message}`);
      }
    }
  };
  await probe("backend", "backend", backendGiven);
  await probe("v1 session server", "session server", v1Given);
  await probe("v2 session server", "session server", v2Given);
  const verify = async (version: SessionServerVersion, given: GivenLocation | undefined): Promise<void> => {
    if (given === undefined) return;
    for (const url of given.url.split(",")) {
      let detected;
      try {
        detected = await detectSessionServerVersion(url, health[url], context.probeTimeoutMs);
      } catch (error) {
        const fix = /\/v1\/*$/i.test(url) ? `; ${v1Fix(url, "session server")}` : "";
        throw new CliExit(EXIT_USAGE, `the ${version} session server at ${url} (${given.from}) failed the version check: ${(error as Error).message}${fix}`);
      }
      if (detected.version !== version) {
        throw new CliExit(
          EXIT_USAGE,
          `${given.from} expects a ${version} session server, but ${url} is ${detected.version} (${detected.evidence}); are the --v1 and --v2 URLs swapped?`,
        );
      }
    }
  };
  await verify("v1", v1Given);
  await verify("v2", v2Given);
  if (options.cassette !== undefined && backendGiven !== undefined) {
    throw new CliExit(EXIT_USAGE, `--cassette and ${backendGiven.from} both name the backend; give one`);
  }
  const oneGiven = (v1Given === undefined) !== (v2Given === undefined);
  if (oneGiven && backendGiven === undefined && options.cassette === undefined) {
    const [given, embedded] = v1Given !== undefined ? (["--v1", "v2"] as const) : (["--v2", "v1"] as const);
    throw new CliExit(
      EXIT_USAGE,
      `${given} was given alone: the ${embedded} session server started here would call a mock backend of its own, which your server does not call, ` +
        `so their payloads could never match; pass --backend <the backend your server calls> (the ${embedded} server started here uses it too), or give --v1 and --v2 both`,
    );
  }

  const warnings = new Map<string, number>();
  let environment: ParityEnvironment;
  try {
    // Something to start and enough trajectories to pay for a second thread's start-up (~1.5 s, a second tokenizer):
    // the session servers run on a worker thread, the mock beside the agents. Measured side by side (README,
    // Benchmarks): 1.37x faster at --batch 256, no faster at 16 where the start-up dominates.
    const startsSomething = v1Given === undefined || v2Given === undefined;
    // a template that cannot render the weather scenario stops the run here, with its own error (not a FAIL)
    if (startsSomething && options.cassette === undefined) await (await import("../fixture/scenario-check")).checkWeatherScenario(model);
    const threaded = options.serversThread ?? options.batch >= SERVERS_THREAD_MIN_BATCH;
    const start = threaded && startsSomething ? startParityEnvironmentSplit : startParityEnvironment;
    environment = await start({
      backendUrl: backendGiven?.url,
      cassette: options.cassette,
      v1Url: v1Given?.url,
      v2Url: v2Given?.url,
      ...model,
      latencyMs: options.latencyMs,
      messageMatcher: options.messageMatcher,
      // the only variable read there: the matcher, when no flag names one (its check names the variable)
      env: options.messageMatcher === undefined && env[MESSAGE_MATCHER_ENV] !== undefined ? { [MESSAGE_MATCHER_ENV]: env[MESSAGE_MATCHER_ENV] } : {},
      routingReplay: routingReplaySettings(options, env),
      logger: { warn: (message) => warnings.set(message, (warnings.get(message) ?? 0) + 1) },
    });
  } catch (error) {
    // a family/checkpoint refusal names its own piece; an unreadable checkpoint also says where it came from
    if (error instanceof TitoModelError && error.problem !== "missing-file") throw new CliExit(EXIT_USAGE, error.message);
    const blame =
      hfCheckpoint !== undefined ? ` (tokenizer from ${options.hfCheckpoint !== undefined ? "--hf-checkpoint" : HF_CHECKPOINT_ENV} ${hfCheckpoint})` : "";
    throw new CliExit(EXIT_USAGE, `could not start the servers${blame}: ${describeTransportError(error)}`);
  }

  const counter = new SessionRequestCounter();
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const dispatcher = agent.compose(counter.interceptor());
  let progress: ProgressBar | null = null;
  try {
    for (const url of [environment.backendUrl, ...environment.v1Url.split(","), ...environment.v2Url.split(",")]) {
      if (url !== null && !(url in health))
        health[url] = await probeHealth(url, context.probeTimeoutMs).then(
          (result) => result.body,
          () => null,
        );
    }
    const startupMs = performance.now() - t0;

    const batchStart = performance.now();
    progress = new ProgressBar(context.progress ?? { isTTY: false, write: () => true }, { total: 2 * options.batch, label: "trajectories" });
    const bar = progress;
    const urls = { v1: environment.v1Url.split(","), v2: environment.v2Url.split(",") };
    const inputs = { v1: buildWeatherInputSamples(options.batch), v2: buildWeatherInputSamples(options.batch) };
    const runOne = async (version: SessionServerVersion, i: number): Promise<{ run: SessionParityRun | Error; startedMs: number; wallMs: number }> => {
      const start = performance.now();
      let run: SessionParityRun | Error;
      try {
        [run] = await runAgenticRetryTrajectories({
          version,
          inputSamples: [inputs[version][i]],
          sessionServerUrls: urls[version],
          titoModel: model.titoModel,
          cycles: options.cycles,
          toolCallFailureMode: mode,
          dispatcher,
        });
      } catch (error) {
        run = error instanceof Error ? error : new Error(String(error));
      }
      const wallMs = performance.now() - start;
      bar.tick(!(run instanceof Error) && run.failure === undefined);
      return { run, startedMs: start - batchStart, wallMs };
    };
    const pairs = await Promise.all(Array.from({ length: options.batch }, (_, i) => Promise.all(VERSIONS.map((version) => runOne(version, i)))));
    const trajectoriesMs = performance.now() - batchStart;
    progress.finish();

    context.onPairs?.(pairs.map(([v1, v2]) => [v1.run, v2.run]));
    const judgeStart = performance.now();
    const roles = getTitoFamily(model.titoModel ?? DEFAULT_TITO_MODEL).allowedAppendRoles;
    const runPairs = pairs.map(([v1, v2]) => [v1.run, v2.run] as const);
    const decode = await tokenDecoder(model, runPairs);
    const trajectories = pairs.map(([v1, v2], i) => judgePair(i, v1.run, v2.run, options.cycles, mode, roles, decode));
    const judgeMs = performance.now() - judgeStart;

    const runs: ReportRun[] = pairs.flatMap((pair, i) =>
      pair.map(({ run, startedMs, wallMs }, k): ReportRun => {
        const version = VERSIONS[k];
        if (run instanceof Error) {
          return {
            trajectory: i,
            version,
            sessionId: null,
            server: null,
            records: 0,
            requests: 0,
            samples: 0,
            emptyReason: null,
            failure: run.message,
            startedMs,
            wallMs,
          };
        }
        const sessionId = run.preCollect.session_id;
        const instance = counter.server(sessionId);
        return {
          trajectory: i,
          version,
          sessionId,
          server: instance === null ? null : redactUrlCredentials(instance),
          records: run.preCollect.records.length,
          requests: counter.count(sessionId),
          samples: run.failure === undefined && run.emptyReason === null ? run.samples.length : 0,
          emptyReason: run.emptyReason,
          failure: run.failure ?? null,
          startedMs,
          wallMs,
        };
      }),
    );
    const passed = trajectories.filter((trajectory) => trajectory.pass).length;
    const healthOf = (urls: string): unknown => health[urls.split(",")[0]] ?? null;
    const configuration = checkConfiguration(healthOf(environment.v1Url), healthOf(environment.v2Url), {
      v1: environment.started.v1,
      v2: environment.started.v2,
    });
    const silent = VERSIONS.filter((version) => configuration[version] === null);
    if (silent.length > 0 && passed < options.batch && decode !== undefined) configuration.hint = thinkBlockHint(runPairs, silent, decode);
    // The gate judges each version's completed runs as one batch (miles gates a rollout batch, not a pair).
    const gateOf = (k: number) => toReportCheck(checkSessionVerifyGate(pairs.map((pair) => pair[k].run).filter((run) => !(run instanceof Error))));
    const gate = options.verifyGate === true ? { v1: gateOf(0), v2: gateOf(1) } : null;
    const problems = summarizeServerProblems(runs);
    // A base URL with the OpenAI-style /v1 suffix passes a lenient /health but 404s on every routed call: name the fix.
    if (
      problems.first !== null &&
      backendGiven !== undefined &&
      /\/v1\/*$/i.test(backendGiven.url) &&
      runs.some((run) => run.failure?.includes("(status 404)"))
    ) {
      problems.first += ` (${backendGiven.from} ${v1Fix(backendGiven.url, "backend")})`;
    }
    const server = (url: string | null, started: boolean): ReportServer => ({
      url: url === null ? null : url.split(",").map(redactUrlCredentials).join(","),
      origin: url === null ? "unused" : started ? "embedded" : "given",
      ...(url !== null ? { health: url.includes(",") ? url.split(",").map((part) => health[part] ?? null) : (health[url] ?? null) } : {}),
    });
    return {
      reportVersion: 1,
      versions: { package: packageVersion(), node: process.version, sessionServers: [...VERSIONS] },
      startedAt: startedAt.toISOString(),
      options: {
        batch: options.batch,
        cycles: options.cycles,
        latencyMs: options.latencyMs,
        hfCheckpoint: hfCheckpoint ?? null,
        toolCallFailureMode: mode,
        verifyGate: options.verifyGate === true,
      },
      gate,
      configuration,
      servers: {
        backend: server(environment.backendUrl, environment.started.backend),
        v1: server(environment.v1Url, environment.started.v1),
        v2: server(environment.v2Url, environment.started.v2),
      },
      summary: {
        trajectories: options.batch,
        passed,
        failed: options.batch - passed,
        pass: passed === options.batch && (gate === null || (gate.v1.pass && gate.v2.pass)),
        serverProblems: problems.count,
        configurationProblem: configuration.problem !== null && passed < options.batch,
        firstServerProblem: problems.first,
      },
      timings: {
        startupMs,
        trajectoriesMs,
        judgeMs,
        totalMs: performance.now() - (context.startedAtMs ?? t0),
        floorMs: environment.started.backend ? chatCallsPerTrajectory(options.cycles) * options.latencyMs : null,
      },
      requests: counter.total,
      warnings: [...warnings].map(([message, count]) => ({ message, count })),
      trajectories,
      runs,
    };
  } finally {
    progress?.finish();
    try {
      await agent.close();
    } finally {
      await environment.stop();
    }
  }
}

/**
 * A decoder of token ids for the failure text, loaded only when some pair's sample tokens differ (the family's
 * tokenizer, already in memory when servers were started here); undefined when none differ or it cannot load.
 */
async function tokenDecoder(
  model: ModelChoice,
  pairs: ReadonlyArray<readonly [SessionParityRun | Error, SessionParityRun | Error]>,
): Promise<((ids: number[]) => string) | undefined> {
  const differ = pairs.some(([v1, v2]) => {
    if (v1 instanceof Error || v2 instanceof Error || v1.samples.length === 0 || v2.samples.length === 0) return false;
    const [left, right] = [v1.samples[0].tokens, v2.samples[0].tokens];
    return left.length !== right.length || left.some((id, i) => id !== right[i]);
  });
  if (!differ) return undefined;
  try {
    const { loadTitoModel } = await import("../tokenizer/family-load");
    const { tokenizer } = await loadTitoModel({ ...model, chatTemplateKwargs: undefined });
    return (ids) => tokenizer.decode(ids);
  } catch {
    return undefined;
  }
}

/** Chat calls one weather trajectory makes with the Qwen3 template: the initial call plus one per scheduled action. */
function chatCallsPerTrajectory(cycles: number): number {
  return 1 + buildDriverSchedule(QWEN3_APPEND_ROLES, cycles).length;
}

function locate(
  flagValue: string | undefined,
  flag: string,
  env: NodeJS.ProcessEnv,
  envName: string,
  parse: (value: string) => string,
): GivenLocation | undefined {
  if (flagValue !== undefined) return { url: flagValue, from: flag };
  const fromEnv = env[envName]?.trim();
  if (fromEnv === undefined || fromEnv === "") return undefined;
  try {
    return { url: parse(fromEnv), from: envName };
  } catch (error) {
    throw new CliExit(EXIT_USAGE, `${envName} holds ${JSON.stringify(fromEnv)}, which ${(error as Error).message}`);
  }
}

/** `--routing-replay` and its companions, else `SESSION_PARITY_ROUTING_REPLAY`; companions alone are a usage error. */
function routingReplaySettings(options: RunCommandOptions, env: NodeJS.ProcessEnv): RoutingReplaySettings | null {
  if (options.routingReplay !== true) {
    const stray = (["numLayers", "topk", "indexerReplay", "additionR3"] as const).filter((key) => options[key] !== undefined);
    if (stray.length > 0)
      throw new CliExit(EXIT_USAGE, `--num-layers, --topk, --indexer-replay and --addition-r3 need --routing-replay (got ${stray.join(", ")})`);
    try {
      return routingReplayFromEnv(env);
    } catch (error) {
      throw new CliExit(EXIT_USAGE, (error as Error).message);
    }
  }
  return { numLayers: options.numLayers, topk: options.topk, indexer: options.indexerReplay === true, additionR3: options.additionR3 === true };
}
