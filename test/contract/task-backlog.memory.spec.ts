import { MemoryBackend, describeTaskBacklogContract } from '../../lib/testing';
import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';

// The default task store over the contract, on memory: it reads every task to answer a claim query and promises no
// bound, so the backlog suite checks its claim order only.
describeTaskBacklogContract('TaskRecordStore on memory', async () => ({ store: new TaskRecordStore(new MemoryBackend()), close: async () => undefined }));
