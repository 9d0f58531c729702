DROP TABLE realm_linkifiers;
