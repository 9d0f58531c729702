DROP TABLE user_group_subgroups;

--bun:split

DROP TABLE user_group_members;

--bun:split

DROP TABLE user_groups;

--bun:split

DROP TABLE users;

--bun:split

DROP TABLE realms;
