DROP TABLE realm_playgrounds;
