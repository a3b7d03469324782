/**
 * Report events as the protocol service publishes them, for the benches that feed the history without a
 * device: each value of a good quality, stamped by its attribute at `at`.
 */
const encoder = new TextEncoder();

/** One report event's bytes: `values` of `connectionId`, under report number `seq` (its 8-bit SqNum). */
export function reportOf(connectionId: string, seq: number, values: { reference: string; value: number; at: number }[]) {
  const rcb = 'BENCH/LLN0$RP$urcb01';
  return encoder.encode(
    JSON.stringify({
      space: 'default',
      connectionId,
      rcb,
      rptId: 'bench',
      seqNum: seq % 256,
      entryId: null,
      at: new Date().toISOString(),
      values: values.map((v) => ({
        connectionId,
        reference: v.reference,
        value: v.value,
        quality: { validity: 'good', detail: [], source: 'process', test: false, operatorBlocked: false },
        timestamp: new Date(v.at).toISOString(),
        timestampSource: 'attribute',
        receivedAt: new Date(v.at).toISOString(),
        rcb,
        reason: ['data-change'],
        seqNum: seq % 256,
      })),
    }),
  );
}
