/** The variable carrying a group's token; whatever the provider starts inherits it. */
export const GROUP_TOKEN_ENV = "PLANBRIDGE_PROCESS_GROUP"
