/** A JSON column's value: the value as JSON, null when the event leaves it out. */
export const jsonColumn = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value))
