DROP TABLE user_statuses;
