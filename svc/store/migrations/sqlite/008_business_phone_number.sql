-- 008_business_phone_number: the business phone number a message row belongs to (one service
-- may serve several). NULL on older rows: readers count those as the service's default number.
ALTER TABLE svc_messages ADD COLUMN business_phone_number_id TEXT;
