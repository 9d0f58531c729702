DROP TABLE user_mutes;
