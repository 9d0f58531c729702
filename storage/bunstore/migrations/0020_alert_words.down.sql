DROP TABLE alert_words;
