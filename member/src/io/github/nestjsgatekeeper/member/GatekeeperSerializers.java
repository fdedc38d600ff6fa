package io.github.nestjsgatekeeper.member;

import com.hazelcast.nio.serialization.DataSerializableFactory;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;

/**
 * Makes the library's member-side processors from what a client sends. Registered on the members under
 * {@link #FACTORY_ID} (hazelcast.yaml: serialization.data-serializable-factories).
 */
public final class GatekeeperSerializers implements DataSerializableFactory {
    /** The factory id the Node library writes; "GKP1" in ASCII. */
    public static final int FACTORY_ID = 0x474B5031;

    @Override
    public IdentifiedDataSerializable create(int typeId) {
        switch (typeId) {
            case CompareAndSetMany.CLASS_ID:
                return new CompareAndSetMany();
            case Probe.CLASS_ID:
                return new Probe();
            case CompareAndSetOne.CLASS_ID:
                return new CompareAndSetOne();
            default:
                return null;
        }
    }
}
