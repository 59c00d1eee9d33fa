// The in-memory session table: one entry per live session with its policy state, lock and closing flag.
// Ids are 32 lowercase hex characters (a UUID without dashes), as the protocol promises.
import { randomUUID } from "node:crypto";
import { AsyncMutex } from "./lock";

/** One live session. */
export interface SessionEntry<State> {
  readonly id: string;
  /** The policy's trajectory data for this session. */
  readonly state: State;
  /** Serializes positioning and state updates; never held across the upstream call. */
  readonly lock: AsyncMutex;
  /** Set by DELETE before it waits for the lock; chats then get 404 and skip their state update. */
  closing: boolean;
}

/** Session id → entry. */
export class SessionStore<State> {
  private readonly sessions = new Map<string, SessionEntry<State>>();

  constructor(private readonly createState: () => State) {}

  /** Creates an empty session and returns its entry. */
  create(): SessionEntry<State> {
    const id = randomUUID().replace(/-/g, "");
    const entry: SessionEntry<State> = { id, state: this.createState(), lock: new AsyncMutex(), closing: false };
    this.sessions.set(id, entry);
    return entry;
  }

  /** The entry, or undefined when unknown. */
  get(id: string): SessionEntry<State> | undefined {
    return this.sessions.get(id);
  }

  /** True when `entry` is still the live session under its id. */
  isLive(entry: SessionEntry<State>): boolean {
    return this.sessions.get(entry.id) === entry;
  }

  /** Removes a session; returns false when it was not there. */
  remove(id: string): boolean {
    return this.sessions.delete(id);
  }

  /** Drops every session. */
  clear(): void {
    this.sessions.clear();
  }
}
