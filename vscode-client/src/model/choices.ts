/**
 * Choices the server defines, mirrored here for the client's own checks (pure module): the
 * on-conflict choices are the server's models.ON_CONFLICT (tests/lsp/test_protocol_mirror.py
 * keeps the two equal).
 */
export const ON_CONFLICT_CHOICES = ["abort", "skip", "markers", "force"] as const;
export type OnConflict = (typeof ON_CONFLICT_CHOICES)[number];
