// src/insights' buckets against ClickHouse 18.16 (a real server started by the helpers): insight-buckets.contract.ts.
// 18.16 has no toStartOfWeek: weeks are checked through the wall-time shift only.
import { describe } from 'bun:test'
import { sharedClickHouse } from '../helpers/shared-servers'
import { insightBucketsContract } from './insight-buckets.contract'

describe('insight buckets against ClickHouse 18.16', () => {
  insightBucketsContract('ClickHouse 18.16', async () => {
    const server = await sharedClickHouse()
    return async (sql) => {
      const response = await fetch(`${server.url}/`, { method: 'POST', body: `${sql} FORMAT JSONEachRow` })
      const text = await response.text()
      if (!response.ok) throw new Error(text)
      return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))
    }
  }, { startOfWeek: false })
})
