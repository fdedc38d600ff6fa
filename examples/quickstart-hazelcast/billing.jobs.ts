// The jobs are the quickstart's, unchanged: only the module options differ.
export { BillingJobs } from '../quickstart/billing.jobs';
