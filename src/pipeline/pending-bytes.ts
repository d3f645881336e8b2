// Records capture accepted that the log's group-commit writer has not written yet: they count against the log's
// cap and the projects' shares from the moment they are accepted, as records already written do (backlog.ts,
// project-shares.ts), so that a burst of requests waiting for one group cannot pass either bound together.

/** Bytes of records accepted but still waiting for the log's writer, in all and per project. */
export class PendingBytes {
  bytes = 0
  private readonly byProject = new Map<number, number>()

  add(projectId: number | undefined, weight: number): void {
    this.bytes += weight
    if (projectId !== undefined) this.byProject.set(projectId, (this.byProject.get(projectId) ?? 0) + weight)
  }

  remove(projectId: number | undefined, weight: number): void {
    this.bytes -= weight
    if (projectId === undefined) return
    const left = (this.byProject.get(projectId) ?? 0) - weight
    if (left > 0) this.byProject.set(projectId, left)
    else this.byProject.delete(projectId)
  }

  bytesOf(projectId: number): number {
    return this.byProject.get(projectId) ?? 0
  }
}
