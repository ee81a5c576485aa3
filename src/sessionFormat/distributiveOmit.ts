/** Distributes a union over its members so each keeps its own fields (`Omit` of a union keeps only the common ones). */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
