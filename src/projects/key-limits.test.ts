import { describe, expect, test } from 'bun:test'
import { assertMayManage, isUnrestricted, limitsForNewKey, visibleTo, type KeyHolder } from './key-limits'

const ORG_A = '00000000-0000-4000-8000-00000000000a'
const ORG_B = '00000000-0000-4000-8000-00000000000b'
const unrestricted: KeyHolder = { keyId: 'u', scopes: ['*'], scopedTeams: null, scopedOrganizations: null }
const teamOne: KeyHolder = { keyId: 't1', scopes: ['*'], scopedTeams: [1], scopedOrganizations: null }
const flagsOnly: KeyHolder = { keyId: 'f', scopes: ['feature_flag:write'], scopedTeams: null, scopedOrganizations: null }

describe('a key never creates a key wider than itself', () => {
  test('an unrestricted holder gets what it asks for; absent limits mean none', () => {
    expect(isUnrestricted(unrestricted)).toBe(true)
    expect(limitsForNewKey(unrestricted, { scopes: ['*'], scopedTeams: undefined, scopedOrganizations: null })).toEqual({ scopes: ['*'], scopedTeams: null, scopedOrganizations: null })
    expect(limitsForNewKey(unrestricted, { scopes: ['*'], scopedTeams: [2], scopedOrganizations: undefined }).scopedTeams).toEqual([2])
  })

  test('a limited key: left out inherits its own, null (every project) or a wider list is 403', () => {
    expect(isUnrestricted(teamOne)).toBe(false)
    expect(limitsForNewKey(teamOne, { scopes: ['*'], scopedTeams: undefined, scopedOrganizations: undefined })).toEqual({ scopes: ['*'], scopedTeams: [1], scopedOrganizations: null })
    expect(limitsForNewKey(teamOne, { scopes: ['*'], scopedTeams: [1], scopedOrganizations: [ORG_A] })).toEqual({ scopes: ['*'], scopedTeams: [1], scopedOrganizations: [ORG_A] })
    for (const scopedTeams of [null, [1, 2], [2]]) {
      expect(() => limitsForNewKey(teamOne, { scopes: ['*'], scopedTeams, scopedOrganizations: undefined })).toThrow(expect.objectContaining({ status: 403 }))
    }
    const orgLimited: KeyHolder = { ...unrestricted, scopedOrganizations: [ORG_A] }
    expect(() => limitsForNewKey(orgLimited, { scopes: ['*'], scopedTeams: undefined, scopedOrganizations: [ORG_B] })).toThrow(/within its own/)
  })

  test('scopes: only ones the holder holds (write covers read), never *', () => {
    expect(limitsForNewKey(flagsOnly, { scopes: ['feature_flag:read'], scopedTeams: undefined, scopedOrganizations: undefined }).scopes).toEqual(['feature_flag:read'])
    expect(() => limitsForNewKey(flagsOnly, { scopes: ['*'], scopedTeams: undefined, scopedOrganizations: undefined })).toThrow(/scope '\*'/)
    expect(() => limitsForNewKey(flagsOnly, { scopes: ['cohort:read'], scopedTeams: undefined, scopedOrganizations: undefined })).toThrow(/cohort:read/)
  })

  test('roll and revoke: an unrestricted holder any key, a limited key only itself', () => {
    expect(() => assertMayManage(unrestricted, 'other')).not.toThrow()
    expect(() => assertMayManage(teamOne, 't1')).not.toThrow()
    expect(() => assertMayManage(teamOne, 'other')).toThrow(expect.objectContaining({ status: 403 }))
  })

  test('@me shows only the projects a limited key reaches and their organizations', () => {
    const projects = [{ id: 1, organization: ORG_A }, { id: 2, organization: ORG_A }, { id: 3, organization: ORG_B }]
    const orgs = [{ id: ORG_A }, { id: ORG_B }]
    expect(visibleTo(unrestricted, projects, orgs)).toEqual({ projects, organizations: orgs })
    expect(visibleTo(teamOne, projects, orgs)).toEqual({ projects: [projects[0]], organizations: [orgs[0]] })
    expect(visibleTo({ scopedTeams: null, scopedOrganizations: [ORG_B] }, projects, orgs)).toEqual({ projects: [projects[2]], organizations: [orgs[1]] })
  })
})
