/** Whether two float arrays hold the same bit patterns (so -0 ≠ 0, and the comparison is exact). */
export const sameBits = (a: Float64Array, b: Float64Array): boolean => {
  if (a.length !== b.length) return false
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
  return x.every((byte, i) => byte === y[i])
}
