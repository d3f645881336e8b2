// A worker thread's scheduling priority, lowered: Linux accepts a thread id where setpriority takes a pid, so when
// the machine is saturated the thread that answers capture and /decide gets the CPU first.
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'

export function reniceThisThread(nice: number): void {
  if (nice <= 0) return
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), nice)
  } catch {
    // not Linux, or not permitted: run at normal priority
  }
}
