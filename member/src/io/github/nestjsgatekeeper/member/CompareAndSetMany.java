package io.github.nestjsgatekeeper.member;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.core.Offloadable;
import com.hazelcast.core.ReadOnly;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;

import java.io.IOException;
import java.util.Map.Entry;
import java.util.concurrent.CompletableFuture;

/**
 * Many compare-and-sets sent as one client call. The client runs this on one key (any of the batch's) with
 * executeOnKey; it runs off the partition thread (Offloadable) without locking that key (ReadOnly), and makes each
 * write a single-key operation of its own ({@link CompareAndSetOne} through submitToKey), all at once, then answers
 * whether each landed. Each write is therefore what the client's own replace/remove/putIfAbsent would be, synchronous
 * backups included; executeOnKeys would have been one call too, but its backups are asynchronous, and an acknowledged
 * claim lost with its member would let a task run twice. If any write fails, the call fails, and the client takes every
 * write in it as unknown, as it takes any lost answer.
 */
public final class CompareAndSetMany
        implements EntryProcessor<Object, Object, boolean[]>, Offloadable, ReadOnly, HazelcastInstanceAware, IdentifiedDataSerializable {
    static final int CLASS_ID = 1;

    private String mapName;
    private boolean json;
    private String[] keys;
    private String[] expected;
    private String[] next;
    private transient HazelcastInstance instance;

    public CompareAndSetMany() {
    }

    @Override
    public void setHazelcastInstance(HazelcastInstance instance) {
        this.instance = instance;
    }

    @Override
    public boolean[] process(Entry<Object, Object> entry) {
        IMap<Object, Object> map = instance.getMap(mapName);
        @SuppressWarnings("unchecked")
        CompletableFuture<Boolean>[] writes = new CompletableFuture[keys.length];
        for (int i = 0; i < keys.length; i++) {
            writes[i] = map.submitToKey(keys[i], new CompareAndSetOne(json, expected[i], next[i])).toCompletableFuture();
        }
        boolean[] landed = new boolean[keys.length];
        for (int i = 0; i < keys.length; i++) {
            landed[i] = Boolean.TRUE.equals(writes[i].join());
        }
        return landed;
    }

    @Override
    public EntryProcessor<Object, Object, boolean[]> getBackupProcessor() {
        return null;
    }

    @Override
    public String getExecutorName() {
        return Offloadable.OFFLOADABLE_EXECUTOR;
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeString(mapName);
        out.writeBoolean(json);
        out.writeInt(keys.length);
        for (int i = 0; i < keys.length; i++) {
            out.writeString(keys[i]);
            out.writeString(expected[i]);
            out.writeString(next[i]);
        }
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        mapName = in.readString();
        json = in.readBoolean();
        int count = in.readInt();
        keys = new String[count];
        expected = new String[count];
        next = new String[count];
        for (int i = 0; i < count; i++) {
            keys[i] = in.readString();
            expected[i] = in.readString();
            next[i] = in.readString();
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
