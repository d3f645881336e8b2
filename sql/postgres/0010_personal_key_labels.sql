-- Personal key labels are at most 40 characters (PostHog's limit, which the API answers with). An older CLI stored
-- longer ones, which made the key list and a roll of that key fail to answer: cut them to 40.
update personal_api_keys set label = left(label, 40) where length(label) > 40;
