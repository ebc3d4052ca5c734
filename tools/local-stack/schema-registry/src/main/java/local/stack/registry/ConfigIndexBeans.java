package local.stack.registry;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import io.apicurio.common.apps.config.DynamicConfigStorage;
import io.apicurio.common.apps.config.DynamicConfigStorageAccessor;
import java.util.ArrayList;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

/**
 * The two beans that Apicurio's config-index build extension would generate; its deployment
 * artifact is not on Maven Central. No property is editable at run time in the local stack.
 */
@ApplicationScoped
public class ConfigIndexBeans {
    @Produces
    @ApplicationScoped
    DynamicConfigPropertyList dynamicConfigPropertyList() {
        return new DynamicConfigPropertyList(new ArrayList<>());
    }

    @Produces
    @ApplicationScoped
    DynamicConfigStorageAccessor dynamicConfigStorageAccessor(DynamicConfigStorage storage) {
        return () -> storage;
    }
}
