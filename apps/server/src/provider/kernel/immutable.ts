/** Copies for the pure mappings' immutable state: the map or set with one entry set or removed. */

export const withEntry = <K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> =>
  new Map(map).set(key, value)

export const withoutEntry = <K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> => {
  if (!map.has(key)) return map
  const next = new Map(map)
  next.delete(key)
  return next
}

export const withMember = <A>(set: ReadonlySet<A>, member: A): ReadonlySet<A> =>
  set.has(member) ? set : new Set(set).add(member)

export const withoutMember = <A>(set: ReadonlySet<A>, member: A): ReadonlySet<A> => {
  if (!set.has(member)) return set
  const next = new Set(set)
  next.delete(member)
  return next
}
