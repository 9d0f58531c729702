DROP TABLE event_payloads;
