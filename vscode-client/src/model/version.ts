/**
 * Which version of Takeback's protocol the server speaks, and what the person is told when it
 * is not the one this client speaks (a stale `takeback` on PATH). The server advertises it at
 * `initialize` in `capabilities.experimental.takeback.protocolVersion` (docs/protocol.md);
 * tests/lsp/test_protocol_mirror.py keeps PROTOCOL_VERSION equal to the server's.
 *
 * Pure module (no `vscode` import).
 */

export const PROTOCOL_VERSION = 2;

/** The version an initialize result advertises; undefined when it names none (version 1 did not). */
export function advertisedVersion(initializeResult: unknown): number | undefined {
  const experimental = (initializeResult as { capabilities?: { experimental?: unknown } } | undefined)?.capabilities?.experimental;
  const version = (experimental as { takeback?: { protocolVersion?: unknown } } | undefined)?.takeback?.protocolVersion;
  return typeof version === "number" ? version : undefined;
}

/** Why this client cannot talk to the server, and what to do; undefined when the versions match. */
export function versionProblem(initializeResult: unknown, command: string): { problem: string; fix: string } | undefined {
  const spoken = advertisedVersion(initializeResult);
  if (spoken === PROTOCOL_VERSION) {
    return undefined;
  }
  const which = spoken === undefined ? "an older protocol (version 1)" : `protocol version ${spoken}`;
  const fix =
    spoken === undefined || spoken < PROTOCOL_VERSION
      ? "Upgrade the Takeback server (from its clone: `git pull`, then `pipx install --force .`), or point `takeback.server.command` at a current one."
      : "Update the Takeback extension, or point `takeback.server.command` at a server of its version.";
  return {
    problem: `The Takeback server (${command}) speaks ${which}; this extension speaks version ${PROTOCOL_VERSION}, so it sends it nothing.`,
    fix,
  };
}
