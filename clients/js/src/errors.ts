// Typed errors. Every error of this package is a LockhostError; a refusal
// or an end from the host is a RefusedError carrying the host's reason.

export class LockhostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The connection could not be made, or dropped. */
export class ConnectionError extends LockhostError {}

/** The host sent bytes that break docs/protocol.md; the client closed the connection. */
export class ProtocolError extends LockhostError {}

/** No answer in time (the client's own waits of section 6.1). */
export class TimeoutError extends LockhostError {}

/** A command the host did not stamp (it answered with a notice instead). */
export class CommandRefusedError extends LockhostError {}

/** Section 5.1: Server_Disconnect's reasons. */
export const Reasons = [
  "Generic", "Protocol", "Defs", "UsernameLength", "UsernameChars", "UsernameAlreadyOnline", "ServerFull",
  "BadPassword", "Timeout", "BadPacket", "ServerClosing", "SlowClient", "Kicked", "ClockSync", "RateLimited",
  "SpectatorsFull", "Lagging", "BadToken", "Replaced", "Desync", "Banned", "BadArbiterSecret",
] as const;
export type ReasonName = (typeof Reasons)[number] | `Reason${number}`;

/** The host refused the join or ended the session with Server_Disconnect. */
export class RefusedError extends LockhostError {
  /** The reason's number (section 5.1). */
  readonly reason: number;
  /** The reason's name, such as "BadPassword". */
  readonly reasonName: ReasonName;
  /** The host's sentence for a person. */
  readonly hostMessage: string;
  /** For Defs: one status a database (section 5.2). */
  readonly defStatuses: Uint8Array;
  constructor(reason: number, message: string, defStatuses: Uint8Array = new Uint8Array(0)) {
    const name: ReasonName = Reasons[reason] ?? `Reason${reason}`;
    super(`refused by the host (${name})${message ? ": " + message : ""}`);
    this.reason = reason;
    this.reasonName = name;
    this.hostMessage = message;
    this.defStatuses = defStatuses;
  }
}
