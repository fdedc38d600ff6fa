export default async function globalTeardown() {}
