// The user summary embedded in API objects (created_by, verified_by, ...), as PostHog's UserBasicSerializer renders it.

export interface UserBasic {
  id: number
  uuid: string
  distinct_id: string
  first_name: string
  email: string
  is_email_verified: boolean
}
