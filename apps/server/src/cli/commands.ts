// Each concern's CLI module registers itself here; importing it is what makes it available.
export {}
