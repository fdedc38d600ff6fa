package io.github.nestjsgatekeeper.member;

import com.hazelcast.core.HazelcastJsonValue;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;

import java.io.IOException;
import java.util.Map.Entry;

/**
 * One compare-and-set on one key, as IMap.replace(key, old, new), remove(key, old) and putIfAbsent decide it: writes
 * the next value (or removes the entry, or creates it) only if the stored value is exactly the expected one. Run as a
 * single-key operation, so its backups are synchronous, as those calls' are. Values are JSON documents (stored as
 * HazelcastJsonValue, so indexes and predicates read them) or plain strings.
 */
public final class CompareAndSetOne implements EntryProcessor<Object, Object, Boolean>, IdentifiedDataSerializable {
    static final int CLASS_ID = 3;

    private boolean json;
    private String expected;
    private String next;

    public CompareAndSetOne() {
    }

    CompareAndSetOne(boolean json, String expected, String next) {
        this.json = json;
        this.expected = expected;
        this.next = next;
    }

    @Override
    public Boolean process(Entry<Object, Object> entry) {
        Object stored = entry.getValue();
        boolean matches = expected == null ? stored == null : stored != null && expected.equals(stored.toString());
        if (!matches) {
            return Boolean.FALSE;
        }
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
        out.writeString(expected);
        out.writeString(next);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        json = in.readBoolean();
        expected = in.readString();
        next = in.readString();
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
