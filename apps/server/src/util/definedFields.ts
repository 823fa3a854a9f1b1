/** `T` written out member by member, so that editors show the object type instead of the intersection. */
type Simplify<T> = { [K in keyof T]: T[K] } & {}

/**
 * The members of `T` that are never undefined stay as they are; those that may be undefined
 * become optional members without `undefined` in their type, as `exactOptionalPropertyTypes`
 * wants for `{ key?: V }`.
 */
export type DefinedFields<T> = Simplify<
  { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
    [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>
  }
>

/**
 * The members of `fields` whose value is not undefined: `{ ...definedFields({ path: e.path }) }`
 * instead of `...(e.path === undefined ? {} : { path: e.path })`. Under
 * `exactOptionalPropertyTypes` an optional member must be absent rather than undefined, and this
 * is the one place that spells that out.
 */
export const definedFields = <T extends Readonly<Record<string, unknown>>>(fields: T): DefinedFields<T> => {
  const defined: Record<string, unknown> = {}
  for (const key of Object.keys(fields)) {
    const value = fields[key]
    if (value !== undefined) defined[key] = value
  }
  return defined as DefinedFields<T>
}
