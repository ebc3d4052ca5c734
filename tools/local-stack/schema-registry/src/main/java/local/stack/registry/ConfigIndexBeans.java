package local.stack.registry;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import java.util.ArrayList;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

/**
 * The bean that Apicurio's config-index build extension would generate (the list of properties
 * editable at run time); its deployment artifact is not on Maven Central. None is editable in the
 * local stack.
 */
@ApplicationScoped
public class ConfigIndexBeans {
    @Produces
    @ApplicationScoped
    DynamicConfigPropertyList dynamicConfigPropertyList() {
        return new DynamicConfigPropertyList(new ArrayList<>());
    }
}
