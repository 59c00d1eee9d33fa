// The globalSetup/globalTeardown entries run in-process: they publish the URLs, keep the handle, and undo both.
// Real servers on loopback; every URL is probed on a fresh connection to prove what is up and what is gone.
import globalSetup, { PARITY_ENVIRONMENT_KEY, type GlobalParityState } from "../../setup/global-setup";
import globalTeardown from "../../setup/global-teardown";
import { probeHealth } from "./loopback-probe";

const VARIABLES = ["SESSION_PARITY_BACKEND_URL", "SESSION_PARITY_V1_URL", "SESSION_PARITY_V2_URL"] as const;

describe("global setup and teardown", () => {
  const saved = new Map<string, string | undefined>();
  beforeEach(() => {
    for (const name of VARIABLES) {
      saved.set(name, process.env[name]);
      delete process.env[name];
    }
  });
  afterEach(async () => {
    await globalTeardown();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  test("setup publishes three live URLs; teardown stops them, frees the ports and unsets the variables", async () => {
    await globalSetup();
    const state = (globalThis as { [PARITY_ENVIRONMENT_KEY]?: GlobalParityState })[PARITY_ENVIRONMENT_KEY];
    expect(state?.environment.started).toEqual({ backend: true, v1: true, v2: true });
    const urls = VARIABLES.map((name) => process.env[name] as string);
    expect(urls.every((url) => /^http:\/\/127\.0\.0\.1:\d+$/.test(url))).toBe(true);
    expect(urls).toEqual([state?.environment.backendUrl, state?.environment.v1Url, state?.environment.v2Url]);
    for (const url of urls) expect((await probeHealth(url)).status).toBe(200);

    await globalTeardown();
    for (const name of VARIABLES) expect(process.env[name]).toBeUndefined();
    expect((globalThis as { [PARITY_ENVIRONMENT_KEY]?: GlobalParityState })[PARITY_ENVIRONMENT_KEY]).toBeUndefined();
    for (const url of urls) await expect(probeHealth(url)).rejects.toThrow(/ECONNREFUSED/);
  });

  test("a server URL set by the user is honoured and restored as it was; only the rest is started", async () => {
    process.env.SESSION_PARITY_V1_URL = "http://127.0.0.1:7/";
    await globalSetup();
    expect(process.env.SESSION_PARITY_V1_URL).toBe("http://127.0.0.1:7");
    const state = (globalThis as { [PARITY_ENVIRONMENT_KEY]?: GlobalParityState })[PARITY_ENVIRONMENT_KEY];
    expect(state?.environment.started).toEqual({ backend: true, v1: false, v2: true });
    await globalTeardown();
    expect(process.env.SESSION_PARITY_V1_URL).toBe("http://127.0.0.1:7/");
    expect(process.env.SESSION_PARITY_V2_URL).toBeUndefined();
  });

  test("a second setup without teardown (a watch-mode rerun) replaces the stale servers instead of adopting their dead URLs", async () => {
    process.env.SESSION_PARITY_V2_URL = "http://127.0.0.1:7";
    await globalSetup();
    const first = [process.env.SESSION_PARITY_BACKEND_URL as string, process.env.SESSION_PARITY_V1_URL as string];
    await globalSetup();
    const state = (globalThis as { [PARITY_ENVIRONMENT_KEY]?: GlobalParityState })[PARITY_ENVIRONMENT_KEY];
    expect(state?.environment.started).toEqual({ backend: true, v1: true, v2: false });
    const second = [process.env.SESSION_PARITY_BACKEND_URL as string, process.env.SESSION_PARITY_V1_URL as string];
    for (const url of first) await expect(probeHealth(url)).rejects.toThrow(/ECONNREFUSED/);
    for (const url of second) expect((await probeHealth(url)).status).toBe(200);
    expect(state?.previousEnv).toEqual({
      SESSION_PARITY_BACKEND_URL: undefined,
      SESSION_PARITY_V1_URL: undefined,
      SESSION_PARITY_V2_URL: "http://127.0.0.1:7",
    });
    await globalTeardown();
    expect(process.env.SESSION_PARITY_V1_URL).toBeUndefined();
    expect(process.env.SESSION_PARITY_V2_URL).toBe("http://127.0.0.1:7");
  });

  test("a failing start rejects with the failing part named and publishes nothing", async () => {
    process.env.SESSION_PARITY_BACKEND_URL = "not a url";
    await expect(globalSetup()).rejects.toThrow('SESSION_PARITY_BACKEND_URL holds "not a url"');
    expect(process.env.SESSION_PARITY_V1_URL).toBeUndefined();
    expect((globalThis as { [PARITY_ENVIRONMENT_KEY]?: GlobalParityState })[PARITY_ENVIRONMENT_KEY]).toBeUndefined();
  });

  test("SESSION_PARITY_SERVERS_THREAD=1 runs the session servers on a worker thread, the mock on Jest's thread", async () => {
    const state = () => (globalThis as { [PARITY_ENVIRONMENT_KEY]?: GlobalParityState })[PARITY_ENVIRONMENT_KEY];
    const previous = process.env.SESSION_PARITY_SERVERS_THREAD;
    try {
      process.env.SESSION_PARITY_SERVERS_THREAD = "1";
      await globalSetup();
      expect(state()?.environment.started).toEqual({ backend: true, v1: true, v2: true });
      expect(state()?.environment.backend?.url).toBe(process.env.SESSION_PARITY_BACKEND_URL);
      const urls = ["SESSION_PARITY_V1_URL", "SESSION_PARITY_V2_URL"].map((name) => process.env[name] as string);
      for (const url of urls) expect((await probeHealth(url)).status).toBe(200);
      await globalTeardown();
      for (const url of urls) await expect(probeHealth(url)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      if (previous === undefined) delete process.env.SESSION_PARITY_SERVERS_THREAD;
      else process.env.SESSION_PARITY_SERVERS_THREAD = previous;
    }
  });
});
