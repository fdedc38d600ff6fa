// Prints one plain closing line, "N passed, N failed", that CI systems read in any language.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests } = results;
    process.stdout.write(`jest: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests} skipped\n`);
  }
}
module.exports = SummaryReporter;
