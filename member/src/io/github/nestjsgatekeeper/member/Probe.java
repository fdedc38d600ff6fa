package io.github.nestjsgatekeeper.member;

import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;

import java.util.Map.Entry;

/**
 * Answers the library's question "do these members have the processors?": run on no entry (a predicate that matches
 * nothing), it changes nothing; a member without this jar fails to read it, and the call fails.
 */
public final class Probe implements EntryProcessor<Object, Object, Object>, IdentifiedDataSerializable {
    static final int CLASS_ID = 2;

    @Override
    public Object process(Entry<Object, Object> entry) {
        return null;
    }

    @Override
    public void writeData(ObjectDataOutput out) {
    }

    @Override
    public void readData(ObjectDataInput in) {
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
