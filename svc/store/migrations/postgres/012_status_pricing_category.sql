-- 012_status_pricing_category: the category the platform prices a message in (its status's
-- pricing.category: marketing, utility, service, marketing_lite, ...), kept with the status
-- event that reported it. Billing metadata, never content; NULL on older events and on
-- statuses without pricing.
ALTER TABLE svc_message_status_events ADD COLUMN pricing_category TEXT;
