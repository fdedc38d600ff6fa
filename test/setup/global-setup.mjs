// Placeholder until the member script lands: only unit tests run.
export default async function globalSetup() {}
