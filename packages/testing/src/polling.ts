/**
 * Reads `probe` until `done` holds of its value or `timeoutMs` has passed, and returns the last
 * value read: for an effect that lands a moment after the call a test awaited (a stream's close
 * reaching its source, a killed process leaving the process table). The test asserts on the value.
 */
export async function pollUntil<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 2000, everyMs = 10 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    value = await probe();
  }
  return value;
}
