// src/insights' buckets against a current ClickHouse (chDB, in-process): insight-buckets.contract.ts.
import { chdbClient, describeWithChdb } from '../helpers/chdb'
import { insightBucketsContract } from './insight-buckets.contract'

describeWithChdb('insight buckets against ClickHouse 26', () => {
  insightBucketsContract('ClickHouse 26 (chDB)', async () => {
    const client = chdbClient()
    return async (sql) => (await (await client.query({ query: sql, format: 'JSONEachRow' })).json()) as Record<string, string | number>[]
  }, { startOfWeek: true })
})
