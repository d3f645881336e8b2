// Rollout, variant and holdout hashes through the memo of earlier requests (hash-memo.ts): the evaluator's side of it.
import type { CompiledFlag } from './compile'
import { hashString, holdoutHash } from './hash'
import { rememberedHash, type HashKind, type MemoEntry } from './hash-memo'
import type { EvalInput } from './types'

// The memo entry of the identifier hashed last, in the request hashed last: the flags of a request share it, so it
// is found once, not per flag (a pointer comparison: the identifier is the request's own string).
let memoInput: EvalInput | null = null
let memoIdentifier = ''
let memoEntry: MemoEntry | undefined

/**
 * A rollout or variant hash of `flag` (or, without a flag, the holdout hash): from the memo of earlier requests when
 * it has it (by the flag's slot in its project's table, else by its key), else SHA-1 (then kept).
 */
export function memoHash(input: EvalInput, kind: HashKind, flag: CompiledFlag | null, identifier: string): number {
  const memo = input.hashMemo
  const hashPrefix = flag === null ? '' : flag.hashPrefix
  let entry: MemoEntry | undefined
  let slots: Float64Array | null = null
  let slot = -1
  if (memo !== undefined) {
    if (memoInput !== input || memoIdentifier !== identifier) {
      memoEntry = memo.entry(identifier)
      memoInput = input
      memoIdentifier = identifier
    }
    entry = memoEntry
    if (entry !== undefined) {
      const table = flag === null ? null : flag.memoTable
      if (table !== null && kind !== 'holdout' && (entry.table === table || memo.useTable(entry, table))) {
        slots = kind === 'rollout' ? entry.rolloutSlots : entry.variantSlots
        slot = flag!.memoSlot
        const fast = slots[slot]
        if (fast === fast) return fast // NaN: not known yet
      }
      const known = rememberedHash(entry, kind, hashPrefix)
      if (known !== undefined) {
        if (slots !== null) slots[slot] = known
        return known
      }
    }
  }
  const hash =
    kind === 'rollout' ? hashString(hashPrefix + identifier) : kind === 'variant' ? hashString(`${hashPrefix}${identifier}variant`) : holdoutHash(identifier)
  if (entry !== undefined) {
    memo!.remember(entry, kind, hashPrefix, hash)
    if (slots !== null) slots[slot] = hash
  }
  return hash
}
