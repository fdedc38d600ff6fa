package io.github.nestjsgatekeeper.member;

import com.hazelcast.core.HazelcastJsonValue;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Map.Entry;

/**
 * Many compare-and-sets in one call: for each key, writes the next value (or removes the entry, or creates it) only if
 * the stored value is exactly the expected one, as IMap.replace(key, old, new), remove(key, old) and putIfAbsent do.
 * Each key is decided on its own, on its partition's thread; the result is whether that key's write landed. The values
 * are JSON documents (stored as HazelcastJsonValue, so indexes and predicates read them) or plain strings.
 */
public final class CompareAndSetMany implements EntryProcessor<String, Object, Boolean>, IdentifiedDataSerializable {
    static final int CLASS_ID = 1;

    private boolean json;
    private Map<String, String[]> writes;

    public CompareAndSetMany() {
    }

    @Override
    public Boolean process(Entry<String, Object> entry) {
        String[] write = writes.get(entry.getKey());
        if (write == null) {
            return Boolean.FALSE;
        }
        Object stored = entry.getValue();
        String expected = write[0];
        boolean matches = expected == null ? stored == null : stored != null && expected.equals(stored.toString());
        if (!matches) {
            return Boolean.FALSE;
        }
        String next = write[1];
        if (next == null) {
            if (stored != null) {
                entry.setValue(null);
            }
        } else {
            entry.setValue(json ? new HazelcastJsonValue(next) : next);
        }
        return Boolean.TRUE;
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeBoolean(json);
        out.writeInt(writes.size());
        for (Map.Entry<String, String[]> write : writes.entrySet()) {
            out.writeString(write.getKey());
            out.writeString(write.getValue()[0]);
            out.writeString(write.getValue()[1]);
        }
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        json = in.readBoolean();
        int count = in.readInt();
        writes = new HashMap<>(count * 2);
        for (int i = 0; i < count; i++) {
            String key = in.readString();
            writes.put(key, new String[] {in.readString(), in.readString()});
        }
    }

    @Override
    public int getFactoryId() {
        return GatekeeperSerializers.FACTORY_ID;
    }

    @Override
    public int getClassId() {
        return CLASS_ID;
    }
}
